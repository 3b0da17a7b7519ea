// The papers' claims that mr-sim's shipped scenarios test, and how each is
// judged from the runs (`mr-sim run --json` output). sim/report.cc lays the
// sections out; claims_load.cc (Joint, Pandas: metrics against load) and
// claims_mix.cc (Matchmaking, JoSS, Shen, the scale target) build them.
//
// Verdicts: "reproduced" — the measured numbers show the claimed effect
// within the tolerance the claim's code states; "partly" — the direction
// holds but not the size or the place; "not" — it does not hold here.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/svg.h"

namespace mr::sim {

using Json = nlohmann::ordered_json;
using Runs = std::vector<const Json*>;

struct Claim {
  std::string source;   // "Joint §6.2, Fig. 5(a)"
  std::string quote;    // the paper's words
  std::string verdict;  // reproduced | partly | not
  std::string measured; // one line with the numbers behind the verdict
};

struct Chart {
  std::string name;     // file name stem: "<scenario>-<name>.svg"
  std::string caption;
  std::string svg;
};

struct Section {
  std::string title;
  std::vector<Chart> charts;
  std::vector<Claim> claims;
  std::string table;    // markdown: the measured figures
};

// The section for `scenario`, or nullopt for a scenario without claims.
std::optional<Section> BuildSection(const std::string& scenario, const Runs& runs);

// ---- Helpers shared by the claim files ----

// Labels in order of first appearance.
std::vector<std::string> Labels(const Runs& runs);
// The value of the run's only (first) sweep axis as a number; NaN if none.
double SweepX(const Json& run);
// A metric (top-level key) against the sweep value, for one label, by x;
// with skip_cut, runs cut off at max_backlog are left out.
std::vector<std::pair<double, double>> Curve(const Runs& runs, const std::string& label,
                                             const std::string& metric, double scale = 1,
                                             bool skip_cut = false);
// The run of `label` (and sweep value text, if given); nullptr if none.
const Json* Find(const Runs& runs, const std::string& label, const std::string& sweep = "");
double Get(const Json& run, const std::string& key);
std::string Fmt(double v, int decimals = 2);
// A line chart of `metric` against the sweep value, one line per label.
svg::LineChart LoadChart(const Runs& runs, const std::string& title, const std::string& x_label,
                         const std::string& y_label, const std::string& metric, double scale,
                         bool log_y, bool skip_cut = false);
// Markdown table: header row, then rows.
std::string Table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows);

// Section builders.
std::optional<Section> JointSection(const std::string& scenario, const Runs& runs);
std::optional<Section> PandasSection(const std::string& scenario, const Runs& runs);
std::optional<Section> MatchmakingSection(const Runs& runs);
std::optional<Section> JossSection(const std::string& scenario, const Runs& runs);
std::optional<Section> ProbabilisticSection(const std::string& scenario, const Runs& runs);
std::optional<Section> ScaleSection(const Runs& runs);

}  // namespace mr::sim
