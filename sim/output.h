// Output of mr-sim runs: JSON ({"runs": [...]}, one object per run with the
// master's metric names), CSV (runs.csv, jobs.csv, backlog.csv) and a short
// text table. Every field is documented in docs/simulator.md, "Output".
// Deterministic: the same runs give the same bytes (wall-clock fields only
// appear for timed runs).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "common/status.h"
#include "sim/metrics.h"

namespace mr::sim {

using Json = nlohmann::ordered_json;

Json RunToJson(const RunResult& run);
// {"runs": [...]}, pretty-printed, with a final newline.
std::string RunsToJson(const std::vector<RunResult>& runs);
// One line per run: label, sweep values and the headline metrics.
std::string RunsToText(const std::vector<RunResult>& runs);
// Writes DIR/runs.csv, DIR/jobs.csv and DIR/backlog.csv (DIR is created).
Status WriteCsv(const std::string& dir, const std::vector<RunResult>& runs);

}  // namespace mr::sim
