// Scenario files: the strict parser, overrides and sweeps, and every
// scenario shipped in sim/scenarios/ run end to end at a reduced size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/cli.h"
#include "sim/output.h"
#include "sim/runner.h"
#include "sim/scenario_file.h"
#include "tests/sim/sim_test_util.h"

namespace mr::sim {
namespace {

const char* kMinimal = R"(
name = "t"
[cluster]
nodes = 4
[[job_types]]
name = "j"
map = 1000
[workload]
arrival = "fixed"
jobs = 3
[[schedulers]]
name = "fifo"
)";

std::string ScenarioPath(const std::string& name) {
  return test::SourceDir() + "/sim/scenarios/" + name + ".toml";
}

Status ParseError(const std::string& extra, const std::vector<Override>& o = {}) {
  return ParseScenario(std::string(kMinimal) + extra, "t.toml", "", o).status();
}

TEST(SimScenarioFile, MinimalParses) {
  auto sc = ParseScenario(kMinimal, "t.toml", "", {});
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_EQ(sc->cluster.nodes, 4);
  EXPECT_EQ(sc->job_types[0].map.mean_ms, 1000);  // a bare number is a fixed time
  EXPECT_EQ(sc->schedulers[0].label, "fifo");
}

// Hadoop's default (mapreduce.tasktracker.outofband.heartbeat = false,
// baselines.md §1), and 0.20/0.21 have none: a scenario asks for them.
TEST(SimScenarioFile, OutOfBandHeartbeatsAreOffUnlessAsked) {
  auto sc = ParseScenario(kMinimal, "t.toml", "", {});
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_FALSE(sc->cluster.out_of_band_heartbeat);
  auto on = ParseScenario(kMinimal, "t.toml", "", {{"cluster.out_of_band_heartbeat", "true"}});
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->cluster.out_of_band_heartbeat);
}

// One clear line naming the key by its full path.
TEST(SimScenarioFile, ErrorsNameTheKey) {
  EXPECT_EQ(ParseError("[network]\nspeed = 3\n").message(), "t.toml: unknown key 'network.speed'");
  EXPECT_EQ(ParseError("[run]\nend_ms = \"soon\"\n").message(), "t.toml: 'run.end_ms' must be an integer");
  EXPECT_EQ(ParseError("[data]\nplacement = \"random\"\n").message(),
            "t.toml: 'data.placement' must be one of uniform, hdfs, round-robin, job-datacenter (got "
            "'random')");
  Status bad_param = ParseError("[[schedulers]]\nname = \"fifo-delay\"\nparams = { delay = 3 }\n");
  EXPECT_NE(bad_param.message().find("unknown parameter 'delay'"), std::string::npos) << bad_param.message();
  Status bad_name = ParseError("[[schedulers]]\nname = \"lifo\"\n");
  EXPECT_NE(bad_name.message().find("unknown scheduler 'lifo'"), std::string::npos);
  auto no_rate = ParseScenario(R"(
[[job_types]]
name = "j"
map = 1
[workload]
jobs = 3
[[schedulers]]
name = "fifo"
)", "t.toml", "", {});
  EXPECT_EQ(no_rate.status().message(),
            "t.toml: workload: give exactly one of mean_interarrival_ms, load, task_rate_per_s");
  EXPECT_TRUE(ParseScenario("x = ", "t.toml", "", {}).status().IsInvalidArgument());
}

TEST(SimScenarioFile, OverridesReachTablesAndArrays) {
  auto sc = ParseScenario(kMinimal, "t.toml", "",
                          {{"cluster.nodes", "9"},
                           {"schedulers.0.params.capacity_pad", "0.5"},
                           {"data.popularity", "skewed"},        // a bare word is a string
                           {"service.remote_slowdown", "2"}});
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_EQ(sc->cluster.nodes, 9);
  EXPECT_EQ(std::get<double>(sc->schedulers[0].params.at("capacity_pad")), 0.5);
  EXPECT_EQ(sc->data.popularity, "skewed");
  EXPECT_EQ(sc->service.remote_slowdown, 2);
  auto exp = ParseScenario(kMinimal, "t.toml", "", {{"workload.arrival", "exponential"},
                                                    {"workload.mean_interarrival_ms", "14000"}});
  ASSERT_TRUE(exp.ok()) << exp.status().ToString();
  EXPECT_EQ(exp->workload.arrival, "poisson");
  EXPECT_FALSE(ParseScenario(kMinimal, "t.toml", "", {{"schedulers.3.name", "fair"}}).ok());
  EXPECT_FALSE(ParseScenario(kMinimal, "t.toml", "", {{"name.x", "1"}}).ok());
}

// Issue 16: a replaced policy is labelled by its new name unless a label is
// given with it; the file's label named the old policy.
TEST(SimScenarioFile, AReplacedPolicyDropsTheFilesLabel) {
  const std::string labelled = std::string(kMinimal) + "label = \"FIFO\"\n";
  auto sc = ParseScenario(labelled, "t.toml", "", {{"schedulers.0.name", "fair"}});
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_EQ(sc->schedulers[0].name, "fair");
  EXPECT_EQ(sc->schedulers[0].label, "fair");
  sc = ParseScenario(labelled, "t.toml", "",
                     {{"schedulers.0.name", "fair"}, {"schedulers.0.label", "mine"}});
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_EQ(sc->schedulers[0].label, "mine");
  sc = ParseScenario(labelled, "t.toml", "", {{"schedulers.0.params.capacity_pad", "0.5"}});
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_EQ(sc->schedulers[0].label, "FIFO");  // not replaced: the file's label stays
}

// mr-sim --add-scheduler NAME[:LABEL][,KEY=VALUE...] appends a row to any
// scenario's list; names and parameters are checked like the file's.
TEST(SimScenarioFile, AddSchedulerAppendsARow) {
  auto o = ParseAddScheduler("fifo-delay:mine,delay_ms=4500");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  auto o2 = ParseAddScheduler("fair");
  ASSERT_TRUE(o2.ok()) << o2.status().ToString();
  auto sc = ParseScenario(kMinimal, "t.toml", "", {*o, *o2});
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  ASSERT_EQ(sc->schedulers.size(), 3u);
  EXPECT_EQ(sc->schedulers[1].name, "fifo-delay");
  EXPECT_EQ(sc->schedulers[1].label, "mine");
  EXPECT_EQ(std::get<int64_t>(sc->schedulers[1].params.at("delay_ms")), 4500);
  EXPECT_EQ(sc->schedulers[2].label, "fair");
  for (const char* bad : {"", ":x", "fair:", "fair,delay", "fair,=1", "fair,a b=1"}) {
    EXPECT_FALSE(ParseAddScheduler(bad).ok()) << bad;
  }
  auto unknown = ParseAddScheduler("nope");
  ASSERT_TRUE(unknown.ok());
  Status s = ParseScenario(kMinimal, "t.toml", "", {*unknown}).status();
  EXPECT_NE(s.message().find("unknown scheduler 'nope'"), std::string::npos) << s.ToString();
  auto bad_param = ParseAddScheduler("fair,bogus=1");
  ASSERT_TRUE(bad_param.ok());
  s = ParseScenario(kMinimal, "t.toml", "", {*bad_param}).status();
  EXPECT_NE(s.message().find("unknown parameter 'bogus'"), std::string::npos) << s.ToString();
}

TEST(SimScenarioFile, SweepAxes) {
  auto sc = ParseScenario(std::string(kMinimal) + "[sweep]\n\"workload.load\" = [0.3, 0.55]\n", "t.toml", "", {});
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(sc->sweep.size(), 1u);
  EXPECT_EQ(sc->sweep[0].second, (std::vector<std::string>{"0.3", "0.55"}));
  auto axis = ParseSweepAxis("workload.load=0.1,0.2");
  ASSERT_TRUE(axis.ok());
  EXPECT_EQ(axis->second.size(), 2u);
  EXPECT_FALSE(ParseSweepAxis("workload.load").ok());
}

// The file's sweep runs every value for every scheduler; --set pins an axis.
TEST(SimRunner, PlanIsTheProductOfAxesAndSchedulers) {
  const std::string path = testing::TempDir() + "/plan.toml";
  std::ofstream(path) << kMinimal << "[[schedulers]]\nname = \"fair\"\n"
                      << "[sweep]\n\"cluster.nodes\" = [2, 3, 5]\n";
  auto runs = RunScenarioFile(path, {});
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 6u);
  EXPECT_EQ((*runs)[4].sweep.at("cluster.nodes"), "5");
  EXPECT_EQ((*runs)[4].node_maps.size(), 5u);
  PlanOptions pinned;
  pinned.set = {{"cluster.nodes", "7"}};
  pinned.params = {{"workload.jobs", {"1", "2"}}};
  pinned.only = {"fair"};
  runs = RunScenarioFile(path, pinned);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[1].node_maps.size(), 7u);
  EXPECT_EQ((*runs)[1].jobs_total, 2);
  pinned.only = {"nope"};
  EXPECT_FALSE(RunScenarioFile(path, pinned).ok());
}

// A trace gives submit times, types and sizes; relative paths start at the
// scenario's directory.
TEST(SimRunner, TraceWorkloadAndCsvOutput) {
  const std::string dir = testing::TempDir() + "/trace";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/jobs.csv") << "submit_ms,type,maps,reduces\n# a comment\n0,j,2,1\n5000,j,3,0\n";
  std::ofstream(dir + "/t.toml") << R"(
[cluster]
nodes = 4
[[job_types]]
name = "j"
map = 1000
reduce = 1000
[workload]
arrival = "trace"
trace = "jobs.csv"
[[schedulers]]
name = "fifo"
)";
  auto runs = RunScenarioFile(dir + "/t.toml", {});
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  const RunResult& r = runs->at(0);
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.jobs[1].submit_ms, 5000);
  EXPECT_EQ(r.jobs[1].maps, 3);
  EXPECT_EQ(r.jobs[1].reduces, 0);
  EXPECT_EQ(r.all.maps_total, 5);
  ASSERT_TRUE(WriteCsv(dir + "/csv", *runs).ok());
  std::ifstream jobs(dir + "/csv/jobs.csv");
  std::string header, first;
  std::getline(jobs, header);
  std::getline(jobs, first);
  EXPECT_EQ(header, "run,job,type,maps,reduces,submit_ms,finish_ms,jtt_ms");
  EXPECT_EQ(first.substr(0, 12), "0,0,j,2,1,0,");
  for (const char* f : {"runs.csv", "backlog.csv"}) EXPECT_TRUE(std::filesystem::exists(dir + "/csv/" + f));
  std::ofstream(dir + "/jobs.csv") << "0,j,zero\n";
  EXPECT_NE(RunScenarioFile(dir + "/t.toml", {}).status().message().find("jobs.csv:1: maps must be"),
            std::string::npos);
}

// Every trace field is parsed whole and strictly; every error names the
// file and line.
TEST(SimRunner, TraceLinesAreParsedStrictly) {
  const std::string dir = testing::TempDir() + "/strict-trace";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/t.toml") << R"(
[cluster]
nodes = 4
[[job_types]]
name = "j"
map = 1000
reduces = 2
[workload]
arrival = "trace"
trace = "jobs.csv"
[[schedulers]]
name = "fifo"
)";
  auto error_of = [&](const std::string& lines) {
    std::ofstream(dir + "/jobs.csv") << "submit_ms,type,maps,reduces\n" << lines;
    return RunScenarioFile(dir + "/t.toml", {}).status().message();
  };
  const std::string at2 = dir + "/t.toml: " + dir + "/jobs.csv:2: ";
  EXPECT_EQ(error_of("10x,j,2\n"), at2 + "submit_ms must be an integer >= 0 (got '10x')");
  EXPECT_EQ(error_of("0,j,2.9\n"), at2 + "maps must be an integer in [1, 1000000] (got '2.9')");
  EXPECT_EQ(error_of("0,j,1e3\n"), at2 + "maps must be an integer in [1, 1000000] (got '1e3')");
  EXPECT_EQ(error_of("0,j,2000000000\n"), at2 + "maps must be an integer in [1, 1000000] (got '2000000000')");
  EXPECT_EQ(error_of("0,j,2,-1\n"), at2 + "reduces must be an integer in [0, 1000000] (got '-1')");
  EXPECT_EQ(error_of("0,j,2,1,9\n"), at2 + "expected submit_ms,type,maps[,reduces] (got 5 fields)");
  EXPECT_EQ(error_of("0,j\n"), at2 + "expected submit_ms,type,maps[,reduces] (got 2 fields)");
  EXPECT_EQ(error_of("0,j,1\n5,nope,2\n"), dir + "/t.toml: " + dir + "/jobs.csv:3: unknown job type 'nope'");
  EXPECT_EQ(error_of(""), dir + "/t.toml: " + dir + "/jobs.csv: no jobs");
  EXPECT_EQ(error_of("# only a comment\n"), dir + "/t.toml: " + dir + "/jobs.csv: no jobs");
  // Good lines: an empty or absent reduces field is the type's default;
  // spaces around a field and a CRLF line end are fine.
  std::ofstream(dir + "/jobs.csv") << "0,j,2,\r\n 7 , j , 3 \n9,j,1,0\n";
  auto runs = RunScenarioFile(dir + "/t.toml", {});
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  const RunResult& r = runs->at(0);
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[0].reduces, 2);
  EXPECT_EQ(r.jobs[1].submit_ms, 7);
  EXPECT_EQ(r.jobs[1].reduces, 2);
  EXPECT_EQ(r.jobs[2].reduces, 0);
}

// The master's four locality levels are disjoint and sum to maps_total;
// cen_locality_rate is (rack + datacenter) / total (common/job_figures.cc).
TEST(SimOutput, LocalityLevelsAreDisjointAsInTheMaster) {
  RunResult r;
  r.all.maps_total = 10;
  r.all.maps_level[0] = 1;
  r.all.maps_level[1] = 2;
  r.all.maps_level[2] = 3;
  r.all.maps_level[3] = 4;
  const Json j = RunToJson(r);
  EXPECT_EQ(j["maps_node_local"], 1);
  EXPECT_EQ(j["maps_rack_local"], 2);
  EXPECT_EQ(j["maps_dc_local"], 3);
  EXPECT_EQ(j["maps_off_dc"], 4);
  EXPECT_EQ(j["maps_node_local"].get<int64_t>() + j["maps_rack_local"].get<int64_t>() +
                j["maps_dc_local"].get<int64_t>() + j["maps_off_dc"].get<int64_t>(),
            j["maps_total"].get<int64_t>());
  EXPECT_DOUBLE_EQ(j["vps_locality_rate"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(j["cen_locality_rate"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["off_cen_rate"].get<double>(), 0.4);
}

// ---- The command line ----

int Cli(const std::vector<std::string>& args, std::string* err) {
  std::vector<const char*> argv = {"mr-sim"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, e;
  const int rc = RunCli(static_cast<int>(argv.size()), argv.data(), out, e);
  *err = e.str();
  return rc;
}

// Usage errors exit 2 with one line, as scenario errors do.
TEST(SimCli, UsageErrorsExitTwoWithOneLine) {
  const std::string file = testing::TempDir() + "/cli.toml";
  std::ofstream(file) << kMinimal;
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{}, {"frobnicate"}, {"run"}, {"run", file, "--bogus"},
                                             {"sweep", file}}) {
    std::string err;
    EXPECT_EQ(Cli(args, &err), 2) << err;
    EXPECT_EQ(err.rfind("mr-sim: ", 0), 0u) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
  std::string err;
  EXPECT_EQ(Cli({"--help"}, &err), 0);
  EXPECT_EQ(Cli({"run", file, "--quiet"}, &err), 0) << err;
  EXPECT_EQ(Cli({"run", file, "--quiet", "--set", "cluster.nodes=0"}, &err), 2);
  EXPECT_EQ(err, "mr-sim: " + file + ": 'cluster.nodes' must be in [1, 1000000] (got 0)\n");
}

// --add-scheduler on the command line: the added row is run and labelled.
TEST(SimCli, AddSchedulerRunsTheAddedPolicy) {
  const std::string file = testing::TempDir() + "/cli-add.toml";
  std::ofstream(file) << kMinimal;
  std::vector<const char*> argv = {"mr-sim", "run", file.c_str(), "--quiet", "--json",
                                   "--add-scheduler", "fair:mine"};
  std::ostringstream out, e;
  ASSERT_EQ(RunCli(static_cast<int>(argv.size()), argv.data(), out, e), 0) << e.str();
  EXPECT_NE(out.str().find("\"mine\""), std::string::npos) << out.str();
  std::string err;
  EXPECT_EQ(Cli({"run", file, "--quiet", "--add-scheduler", "fair,x"}, &err), 2);
  EXPECT_EQ(err.rfind("mr-sim: --add-scheduler 'fair,x': ", 0), 0u) << err;
}

// A typo'd batch of a shipped scenario is one clear line, not a run that
// generates jobs until memory runs out.
TEST(SimCli, UnknownBatchIsAnError) {
  std::string err;
  EXPECT_EQ(Cli({"run", ScenarioPath("probabilistic"), "--quiet", "--set", "workload.batch=grpe"}, &err), 2);
  EXPECT_EQ(err, "mr-sim: " + ScenarioPath("probabilistic") +
                     ": 'workload.batch' = 'grpe' names no batch of workload.classes "
                     "(batches: wordcount, terasort, grep)\n");
}

// Link costs need links to cost.
TEST(SimCli, LinkCostsWithoutTheNetworkIsAnError) {
  std::string err;
  EXPECT_EQ(Cli({"run", ScenarioPath("probabilistic"), "--quiet", "--set", "network.enabled=false"}, &err), 2);
  EXPECT_EQ(err, "mr-sim: " + ScenarioPath("probabilistic") +
                     ": 'network.link_costs' needs enabled = true and node_mb_s > 0\n");
}

// The source tree is found without MR_SOURCE_DIR too (a path compiled in).
TEST(SimShippedScenarios, FoundWithoutTheEnvironment) {
  const char* env = std::getenv("MR_SOURCE_DIR");
  const std::string saved = env ? env : "";
  unsetenv("MR_SOURCE_DIR");
  const std::string path = ScenarioPath("joss-small");
  if (env) setenv("MR_SOURCE_DIR", saved.c_str(), 1);
  EXPECT_TRUE(std::filesystem::exists(path)) << path;
}

// ---- Every shipped scenario, reduced ----

// The reduced size of each shipped scenario (the rest runs as shipped).
const std::map<std::string, std::vector<Override>>& Reduced() {
  static const std::map<std::string, std::vector<Override>> reduced = {
      {"joint-skew", {{"cluster.nodes", "40"}, {"cluster.racks", "4"}, {"workload.duration_ms", "300000"},
                      {"run.end_ms", "300000"}, {"workload.task_rate_per_s", "8"}}},
      {"joint-uniform", {{"cluster.nodes", "40"}, {"cluster.racks", "4"}, {"workload.duration_ms", "300000"},
                         {"run.end_ms", "300000"}, {"workload.task_rate_per_s", "8"}}},
      {"pandas-uniform", {{"cluster.nodes", "60"}, {"workload.duration_ms", "400000"}, {"workload.load", "0.5"}}},
      {"pandas-skewed", {{"cluster.nodes", "60"}, {"workload.duration_ms", "400000"}, {"workload.load", "0.5"}}},
      {"matchmaking", {}},
      {"joss-small", {}},
      {"joss-mixed", {}},
      {"joss-small-uniform", {}},
      {"joss-mixed-uniform", {}},
      {"probabilistic", {{"workload.scale", "0.1"}}},
      {"probabilistic-racks", {{"workload.scale", "0.1"}}},
      {"scale-500", {{"cluster.nodes", "50"}, {"workload.jobs", "500"}}},
      {"speculation-500", {{"cluster.nodes", "50"}, {"cluster.racks", "5"}, {"workload.jobs", "60"}}},
      // Already scaled to a 2-core machine (their [live] tables: sim_live_test.cc).
      {"joss-small-live", {}},
      {"joss-mixed-live", {}},
      {"locality-live", {}},
  };
  return reduced;
}

std::vector<RunResult> RunReduced(const std::string& name) {
  PlanOptions o;
  o.set = Reduced().at(name);
  auto runs = RunScenarioFile(ScenarioPath(name), o);
  EXPECT_TRUE(runs.ok()) << runs.status().ToString();
  if (!runs.ok()) return {};
  for (const RunResult& r : *runs) {
    SCOPED_TRACE(r.label);
    EXPECT_TRUE(r.stopped == "done" || r.stopped == "end_ms") << r.stopped;
    if (r.stopped == "done") {
      EXPECT_EQ(r.all.jobs, r.jobs_total);
    }
    EXPECT_GT(r.all.jobs, 0);
    int64_t on_nodes = 0;
    for (int64_t m : r.node_maps) on_nodes += m;
    EXPECT_EQ(on_nodes, r.all.maps_total);
    const int64_t* l = r.all.maps_level;
    EXPECT_EQ(l[0] + l[1] + l[2] + l[3], r.all.maps_total);
  }
  return std::move(runs).value();
}

const RunResult& Find(const std::vector<RunResult>& runs, const std::string& label,
                      const std::string& sweep_value = "") {
  for (const RunResult& r : runs) {
    bool match = r.label == label;
    if (!sweep_value.empty()) {
      match = match && !r.sweep.empty() && r.sweep.begin()->second == sweep_value;
    }
    if (match) return r;
  }
  ADD_FAILURE() << "no run " << label << " " << sweep_value;
  static const RunResult none;
  return none;
}

TEST(SimShippedScenarios, EveryFileIsCovered) {
  for (const auto& entry : std::filesystem::directory_iterator(ScenarioPath("x").substr(0, ScenarioPath("x").size() - 6))) {
    if (entry.path().extension() != ".toml") continue;
    EXPECT_TRUE(Reduced().count(entry.path().stem().string())) << entry.path() << " has no reduced run here";
  }
}

// Joint §6: the Joint Scheduler routes blocks ahead, so its maps read their
// data locally (some are launched while their block is still on its way,
// and count as remote by the master's rule: locality is judged at launch).
TEST(SimShippedScenarios, JointSkewAndUniform) {
  for (const char* name : {"joint-skew", "joint-uniform"}) {
    auto runs = RunReduced(name);
    const RunResult& js = Find(runs, "JS");
    EXPECT_GT(js.prefetches, 0);
    const double* in = js.all.input_mb;
    EXPECT_GT(in[static_cast<int>(Span::kNode)] / (in[0] + in[1] + in[2] + in[3]), 0.95);
    EXPECT_EQ(Find(runs, "HFS").prefetches, 0);
    // A routed chunk crosses the links once, as its prefetch (Joint §3.2:
    // the hops are the transfer): no map of JS reads its input remotely, and
    // the prefetch bytes are one block per prefetch.
    EXPECT_EQ(in[1] + in[2] + in[3], 0);
    const double* pf = js.all.prefetch_mb;
    EXPECT_DOUBLE_EQ(pf[0] + pf[1] + pf[2] + pf[3], static_cast<double>(js.prefetches) * 128);
  }
}

// Pandas §VII: Pandas queues maps at their local nodes; FIFO takes the head
// job's maps wherever a slot frees.
TEST(SimShippedScenarios, Pandas) {
  for (const char* name : {"pandas-uniform", "pandas-skewed"}) {
    auto runs = RunReduced(name);
    EXPECT_GT(Rate(Find(runs, "Pandas FIFO").all.maps_level[0], Find(runs, "Pandas FIFO").all.maps_total),
              Rate(Find(runs, "FIFO").all.maps_level[0], Find(runs, "FIFO").all.maps_total));
  }
}

// Matchmaking §IV: delay scheduling's locality grows with D, at every
// remote slowdown the file sweeps (12 schedulers x 3 slowdowns).
TEST(SimShippedScenarios, Matchmaking) {
  auto runs = RunReduced("matchmaking");
  EXPECT_EQ(runs.size(), 36u);
  for (const char* slowdown : {"1.0", "1.5", "2.0"}) {
    SCOPED_TRACE(slowdown);
    const RunResult& d03 = Find(runs, "fifo-delay D=0.3s", slowdown);
    const RunResult& d30 = Find(runs, "fifo-delay D=30s", slowdown);
    EXPECT_GT(Rate(d30.all.maps_level[0], d30.all.maps_total), Rate(d03.all.maps_level[0], d03.all.maps_total));
  }
}

// The live-scaled files run under every policy they list; under
// job-datacenter placement, JoSS keeps its small map-heavy jobs' maps in
// their input's datacenter.
TEST(SimShippedScenarios, LiveScaledFilesRun) {
  for (const char* name : {"joss-small-live", "locality-live"}) RunReduced(name);
  auto runs = RunReduced("joss-mixed-live");
  const RunResult& joss = Find(runs, "JoSS-T");
  EXPECT_LT(Rate(joss.all.maps_level[3], joss.all.maps_total),
            Rate(Find(runs, "FIFO").all.maps_level[3], Find(runs, "FIFO").all.maps_total));
}

// JoSS §4.2 policy B keeps a small map-heavy job's maps in the datacenters
// holding its blocks; policy A a small reduce-heavy job's reduce input.
TEST(SimShippedScenarios, Joss) {
  auto runs = RunReduced("joss-small");
  const Tally& wc = Find(runs, "JoSS-T").by_type.at("wc");
  EXPECT_LT(Rate(wc.maps_level[3], wc.maps_total), 0.05);
  EXPECT_GT(ReduceDataLocality(Find(runs, "JoSS-T").by_type.at("permu")), 0.95);
  RunReduced("joss-mixed");
}

TEST(SimShippedScenarios, ProbabilisticAndScale) {
  auto runs = RunReduced("probabilistic");
  EXPECT_EQ(runs.size(), 6u);  // three batches, two schedulers
  EXPECT_EQ(Find(runs, "Fair", "grep").jobs_total, 10);
  // Three racks: maps that are not node-local read within the rack or
  // across it (Table III's local rack and remote tasks).
  auto racks = RunReduced("probabilistic-racks");
  EXPECT_EQ(racks.size(), 6u);
  const Tally& all = Find(racks, "Probabilistic", "wordcount").all;
  EXPECT_GT(all.maps_level[1], 0);  // rack-local maps exist
  EXPECT_EQ(all.maps_level[3], 0);  // one datacenter
  RunReduced("scale-500");
}

// Speculation with 10 % of the nodes at 0.25 speed: under FIFO and Fair,
// LATE launches backups, wins races and shortens the mean JTT against no
// speculation, and every job completes (RunReduced) under every speculator.
// On the same cluster with every node at full speed, LATE's killed
// attempts take at most 10 % of all task time, and Hadoop's rule (60 s
// lag) backs nothing up. Simulated figures, deterministic for the seed.
TEST(SimShippedScenarios, Speculation) {
  auto runs = RunReduced("speculation-500");
  EXPECT_EQ(runs.size(), 6u);  // fifo, fair × none, hadoop, late
  for (const char* policy : {"fifo", "fair"}) {
    SCOPED_TRACE(policy);
    const RunResult& none = Find(runs, policy, "none");
    const RunResult& late = Find(runs, policy, "late");
    EXPECT_EQ(none.backups_launched, 0);
    EXPECT_GT(late.backups_launched, 0);
    EXPECT_GT(late.backups_won, 0);
    EXPECT_LT(MeanJtt(late.all), MeanJtt(none.all));
    EXPECT_GT(Find(runs, policy, "hadoop").backups_launched, 0);
  }
  PlanOptions o;
  o.set = Reduced().at("speculation-500");
  o.set.push_back({"cluster.speeds.0.factor", "1.0"});
  auto uniform = RunScenarioFile(ScenarioPath("speculation-500"), o);
  ASSERT_TRUE(uniform.ok()) << uniform.status().ToString();
  for (const RunResult& r : *uniform) {
    SCOPED_TRACE(r.label + " " + r.speculator);
    EXPECT_EQ(r.all.jobs, r.jobs_total);
    if (r.speculator == "late") {
      EXPECT_GT(r.task_ms, 0);
      EXPECT_LE(r.wasted_ms, 0.10 * r.task_ms);
    }
    if (r.speculator == "hadoop") EXPECT_EQ(r.backups_launched, 0);
  }
}

}  // namespace
}  // namespace mr::sim
