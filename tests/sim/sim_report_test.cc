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

// Pandas Fig. 14, "HFS incurs drastic delay only beyond 0.95 load": with
// loads past 0.95 swept, a knee right after 0.95 is the claim itself, and
// no knee at all by 0.99 shows only its first half.
std::string HfsVerdict(const std::vector<std::pair<double, double>>& hfs) {
  std::vector<Json> runs;
  for (const char* label : {"FIFO", "Pandas FIFO", "HFS", "Pandas Fair"}) {
    for (const auto& [load, jtt_s] : hfs) {
      Json r;
      r["scenario"] = "pandas-uniform";
      r["label"] = label;
      r["sweep"] = Json::object({{"workload.load", Fmt(load, 2)}});
      r["stopped"] = "done";
      r["end_ms"] = 1;
      r["jtt_ms"] = (std::string(label) == "HFS" ? jtt_s : 25.0) * 1000;
      r["vps_locality_rate"] = 0.9;
      runs.push_back(r);
    }
  }
  Runs ptrs;
  for (const Json& r : runs) ptrs.push_back(&r);
  auto section = BuildSection("pandas-uniform", ptrs);
  EXPECT_TRUE(section.has_value());
  return section ? section->claims[2].verdict + ": " + section->claims[2].measured : "";
}

TEST(SimReport, HfsKneePastPointNineFive) {
  EXPECT_EQ(HfsVerdict({{0.3, 24}, {0.9, 30}, {0.95, 35}, {0.97, 400}, {0.99, 900}}).substr(0, 10), "reproduced");
  EXPECT_EQ(HfsVerdict({{0.3, 24}, {0.9, 30}, {0.95, 35}}).substr(0, 10), "reproduced");  // nothing past 0.95 swept
  EXPECT_EQ(HfsVerdict({{0.3, 24}, {0.9, 30}, {0.95, 35}, {0.97, 40}, {0.99, 45}}).substr(0, 6), "partly");
  EXPECT_EQ(HfsVerdict({{0.3, 24}, {0.8, 30}, {0.9, 300}, {0.95, 900}}).substr(0, 6), "partly");
  EXPECT_EQ(HfsVerdict({{0.3, 24}, {0.5, 300}, {0.95, 900}}).substr(0, 3), "not");
}

// Pandas Fig. 14, "beyond 0.95 [...] Pandas achieves very large
// acceleration": when HFS has no knee, the gain is read at the loads swept
// past the paper's 0.95 — here Pandas Fair is slower there.
TEST(SimReport, PandasGainPastThePapersLoadWithoutAKnee) {
  std::vector<Json> runs;
  const std::vector<std::pair<double, double>> hfs = {{0.3, 24}, {0.95, 35}, {0.97, 38}, {0.99, 43}};
  const std::vector<double> pandas_fair = {24, 42, 46, 54};
  for (const char* label : {"FIFO", "Pandas FIFO", "HFS", "Pandas Fair"}) {
    for (size_t i = 0; i < hfs.size(); ++i) {
      Json r;
      r["scenario"] = "pandas-uniform";
      r["label"] = label;
      r["sweep"] = Json::object({{"workload.load", Fmt(hfs[i].first, 2)}});
      r["stopped"] = "done";
      r["end_ms"] = 1;
      const std::string l = label;
      r["jtt_ms"] = (l == "HFS" ? hfs[i].second : l == "Pandas Fair" ? pandas_fair[i] : 25.0) * 1000;
      r["vps_locality_rate"] = 0.9;
      runs.push_back(r);
    }
  }
  Runs ptrs;
  for (const Json& r : runs) ptrs.push_back(&r);
  auto section = BuildSection("pandas-uniform", ptrs);
  ASSERT_TRUE(section.has_value());
  EXPECT_EQ(section->claims[3].verdict, "not") << section->claims[3].measured;
  EXPECT_NE(section->claims[3].measured.find("-26 % at load 0.99"), std::string::npos) << section->claims[3].measured;
}

// Matchmaking runs at several remote slowdowns, the headline (1, the
// paper's hardware with nothing added) last: the headline claims are judged
// on its runs alone, and every other slowdown's verdict is shown beside.
TEST(SimReport, MatchmakingJudgedPerSlowdown) {
  const std::vector<std::string> delays = {"0.3", "0.9", "1.5", "3", "4.5", "9", "15", "30"};
  std::vector<Json> runs;
  for (const char* slowdown : {"2.0", "1.5", "1.0"}) {
    const bool headline = std::string(slowdown) == "1.0";
    auto add = [&](const std::string& label, double locality, double response_s) {
      Json r;
      r["scenario"] = "matchmaking";
      r["label"] = label;
      r["sweep"] = Json::object({{"service.remote_slowdown", slowdown}});
      r["stopped"] = "done";
      r["vps_locality_rate"] = locality;
      r["map_response_ms"] = response_s * 1000;
      r["jtt_ms"] = response_s * 2000;
      runs.push_back(r);
    };
    add("fifo", 0.7, 50);
    // Delay scheduling's locality grows with D at every slowdown; at 2 and
    // 1.5 it beats matchmaking's, at 1 it does not.
    for (size_t i = 0; i < delays.size(); ++i) add("fifo-delay D=" + delays[i] + "s", 0.8 + 0.01 * i, 49);
    add("fifo-matchmaking", headline ? 0.95 : 0.75, headline ? 45 : 55);
    add("fair-delay", 0.9, 48);
    add("fair-matchmaking", headline ? 0.95 : 0.85, headline ? 46 : 60);
  }
  Runs ptrs;
  for (const Json& r : runs) ptrs.push_back(&r);
  auto section = BuildSection("matchmaking", ptrs);
  ASSERT_TRUE(section.has_value());
  ASSERT_EQ(section->claims.size(), 4u);
  EXPECT_EQ(section->claims[0].verdict, "reproduced") << section->claims[0].measured;
  EXPECT_NE(section->claims[0].measured.find("fifo-matchmaking 0.950"), std::string::npos)
      << section->claims[0].measured;
  EXPECT_EQ(section->claims[1].verdict, "reproduced") << section->claims[1].measured;
  EXPECT_EQ(section->claims[2].verdict, "reproduced") << section->claims[2].measured;  // monotone at each point
  EXPECT_EQ(section->claims[3].verdict, "reproduced") << section->claims[3].measured;
  // The other slowdowns' verdicts beside the headline's.
  EXPECT_NE(section->claims[0].measured.find("remote_slowdown 1.5: partly"), std::string::npos)
      << section->claims[0].measured;
  EXPECT_NE(section->claims[0].measured.find("remote_slowdown 2.0: partly"), std::string::npos)
      << section->claims[0].measured;
  EXPECT_NE(section->table.find("| remote_slowdown"), std::string::npos) << section->table;
  // The table of figures has the headline's runs only: one row per scheduler.
  const std::string row = "| fifo-matchmaking |";
  const size_t first = section->table.find(row);
  EXPECT_NE(first, std::string::npos) << section->table;
  EXPECT_EQ(section->table.find(row, first + 1), std::string::npos) << section->table;
}

// JoSS small at two inter-datacenter bandwidths, the headline (62.5 MB/s)
// second: its claims read exactly as a run of the headline bandwidth alone.
TEST(SimReport, JossJudgedAtTheHeadlineBandwidth) {
  PlanOptions both, headline;
  both.params = {{"network.dc_mb_s", {"25.0", "62.5"}}};
  headline.params = {{"network.dc_mb_s", {"62.5"}}};
  const std::string path = test::SourceDir() + "/sim/scenarios/joss-small.toml";
  auto all = RunScenarioFile(path, both);
  auto one = RunScenarioFile(path, headline);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  const Json all_json = Json::parse(RunsToJson(*all)), one_json = Json::parse(RunsToJson(*one));
  Runs all_runs, one_runs;
  for (const Json& r : all_json["runs"]) all_runs.push_back(&r);
  for (const Json& r : one_json["runs"]) one_runs.push_back(&r);
  auto all_s = BuildSection("joss-small", all_runs);
  auto one_s = BuildSection("joss-small", one_runs);
  ASSERT_TRUE(all_s && one_s);
  ASSERT_EQ(all_s->claims.size(), one_s->claims.size());
  for (size_t i = 0; i < all_s->claims.size(); ++i) {
    SCOPED_TRACE(all_s->claims[i].source);
    EXPECT_EQ(all_s->claims[i].verdict, one_s->claims[i].verdict);
    EXPECT_EQ(all_s->claims[i].measured.rfind(one_s->claims[i].measured, 0), 0u)
        << all_s->claims[i].measured << "\nvs\n" << one_s->claims[i].measured;
    EXPECT_NE(all_s->claims[i].measured.find("dc_mb_s 25.0: "), std::string::npos) << all_s->claims[i].measured;
  }
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
                           "![Fig. 9: inter-datacenter traffic per scheduler (dc_mb_s = 62.5)](joss-small-int.svg)",
                           "| claim | dc_mb_s 62.5 (headline) | dc_mb_s 25.0 |"}) {
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
