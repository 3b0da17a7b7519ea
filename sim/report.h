// mr-sim report DIR: reads every DIR/*.json written by `mr-sim run --json`
// and writes DIR/report.md with SVG charts beside it, each chart next to the
// paper's claim it tests (sim/claims.h) and a verdict with the measured
// numbers.
#pragma once

#include <string>

#include "common/status.h"

namespace mr::sim {

Status WriteReport(const std::string& dir);

}  // namespace mr::sim
