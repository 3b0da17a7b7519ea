// mr-sim report: verdicts from given runs, and the whole path from a
// shipped scenario's runs to report.md and its charts.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sim/claims.h"
#include "sim/output.h"
#include "sim/report.h"
#include "sim/runner.h"
#include "sim/scenario_file.h"
#include "tests/sim/sim_test_util.h"

namespace mr::sim {
namespace {

// Runs of pandas-uniform with the JTT curves given (load -> seconds).
std::vector<Json> PandasRuns(const std::vector<std::pair<double, double>>& fifo) {
  std::vector<Json> runs;
  const char* loads[] = {"0.3", "0.5", "0.6", "0.7", "0.95"};
  for (const char* label : {"FIFO", "Pandas FIFO", "HFS", "Pandas Fair"}) {
    for (size_t i = 0; i < fifo.size(); ++i) {
      Json r;
      r["scenario"] = "pandas-uniform";
      r["label"] = label;
      r["sweep"] = Json::object({{"workload.load", loads[i]}});
      r["stopped"] = "done";
      r["end_ms"] = 1;
      r["jtt_ms"] = std::string(label) == "FIFO" ? fifo[i].second * 1000 : 25000.0;
      r["vps_locality_rate"] = 0.9;
      runs.push_back(r);
    }
  }
  return runs;
}

std::string FifoVerdict(const std::vector<std::pair<double, double>>& fifo) {
  std::vector<Json> runs = PandasRuns(fifo);
  Runs ptrs;
  for (const Json& r : runs) ptrs.push_back(&r);
  auto section = BuildSection("pandas-uniform", ptrs);
  EXPECT_TRUE(section.has_value());
  return section ? section->claims[0].verdict + ": " + section->claims[0].measured : "";
}

// Pandas Fig. 8, "very large delay beyond 0.6 load": the last load before
// the knee (JTT > 3x its low-load JTT) against the paper's 0.6.
TEST(SimReport, KneeVerdicts) {
  EXPECT_EQ(FifoVerdict({{0.3, 40}, {0.5, 50}, {0.6, 60}, {0.7, 900}, {0.95, 900}}).substr(0, 10), "reproduced");
  EXPECT_EQ(FifoVerdict({{0.3, 40}, {0.5, 50}, {0.6, 400}, {0.7, 900}, {0.95, 900}}).substr(0, 6), "partly");
  EXPECT_EQ(FifoVerdict({{0.3, 40}, {0.5, 50}, {0.6, 60}, {0.7, 80}, {0.95, 900}}).substr(0, 6), "partly");
  const std::string none = FifoVerdict({{0.3, 40}, {0.5, 50}, {0.6, 60}, {0.7, 80}, {0.95, 100}});
  EXPECT_EQ(none.substr(0, 3), "not");
  EXPECT_NE(none.find("no knee up to 0.95"), std::string::npos) << none;
}

TEST(SimReport, UnknownScenarioHasNoSection) {
  EXPECT_FALSE(BuildSection("my-own", {}).has_value());
}

TEST(SimReport, EmptyDirIsAnError) {
  const std::string dir = testing::TempDir() + "/empty-report";
  std::filesystem::create_directories(dir);
  EXPECT_TRUE(WriteReport(dir).IsInvalidArgument());
}

// joss-small as shipped (it runs in a fraction of a second): report.md
// quotes the claims with their figures, and every chart is an SVG file.
TEST(SimReport, FromShippedScenarioRunsToMarkdownAndCharts) {
  auto runs = RunScenarioFile(test::SourceDir() + "/sim/scenarios/joss-small.toml", {});
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  const std::string dir = testing::TempDir() + "/report";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/joss-small.json") << RunsToJson(*runs);
  ASSERT_TRUE(WriteReport(dir).ok());
  std::ifstream in(dir + "/report.md");
  const std::string md((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* want : {"| joss-small | JoSS §6.1, Fig. 7 |", "> — JoSS §6.1, Table 9",
                           "![Fig. 9: inter-datacenter traffic per scheduler](joss-small-int.svg)"}) {
    EXPECT_NE(md.find(want), std::string::npos) << want;
  }
  int charts = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".svg") continue;
    ++charts;
    std::ifstream f(e.path());
    std::string head(4, ' ');
    f.read(head.data(), 4);
    EXPECT_EQ(head, "<svg");
    EXPECT_NE(md.find(e.path().filename().string()), std::string::npos);
  }
  EXPECT_EQ(charts, 5);
}

}  // namespace
}  // namespace mr::sim
