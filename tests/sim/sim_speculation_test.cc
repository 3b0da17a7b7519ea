// mr-sim hosting a speculator (sim/host_speculation.cc): a backup attempt
// that beats a slow node, the progress the host reports, frozen nodes,
// conservation of attempts under failures with backups, and the scenario
// keys and command-line option that choose a speculator.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "scheduler/speculator.h"
#include "sim/cli.h"
#include "sim/host.h"
#include "sim/output.h"
#include "sim/scenario_file.h"
#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace mr::sim {
namespace {

using test::Policy;
using test::SmallScenario;

RunResult MustRun(const Scenario& sc, const std::string& policy) {
  auto w = MakeWorkload(sc);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto r = RunOne(sc, *w, Policy(policy));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : RunResult{};
}

// Four nodes, one map slot each; node 0 computes at 0.1. FIFO launches
// maps 0/1/2 at nodes 0/1/2's first heartbeats (0, 250, 500 ms); maps 1
// and 2 end at 10250 and 10500; map 0 would take 100 s. Node 1's heartbeat
// at 10250 (after map 1's end at that instant: ends come first) launches
// the reduce there, and LATE backs map 0 up in node 1's idle map slot
// (map 0's rate 0.01/s is below the job's 25th percentile, node 1 is not
// slow, 90 s left > the 10 s the done map took). The backup ends at 20250
// and wins; the original is killed after 20.25 s; the reduce ends 5 s
// later. Without speculation the job ends at 105 s.
Scenario SlowNode() {
  Scenario sc = SmallScenario(/*nodes=*/4);
  sc.cluster.speeds.push_back(SpeedGroup{{0}, 0, 0.1});
  return sc;
}

TEST(SimSpeculation, ABackupBeatsASlowNode) {
  Scenario sc = SlowNode();
  const RunResult none = MustRun(sc, "fifo");
  EXPECT_EQ(none.jobs[0].finish_ms, 105000);
  EXPECT_EQ(none.backups_launched, 0);
  sc.speculation.name = "late";
  const RunResult late = MustRun(sc, "fifo");
  EXPECT_EQ(late.stopped, "done");
  EXPECT_EQ(late.backups_launched, 1);
  EXPECT_EQ(late.backups_won, 1);
  EXPECT_EQ(late.attempts_killed, 1);
  EXPECT_DOUBLE_EQ(late.wasted_ms, 20250);
  EXPECT_EQ(late.jobs[0].finish_ms, 25250);
  EXPECT_EQ(late.node_maps, (std::vector<int64_t>{0, 2, 1, 0}));  // the winner counts
  // Slot time: maps 10000 + 10000, the original 20250, the backup 10000,
  // the reduce 15000.
  EXPECT_DOUBLE_EQ(late.task_ms, 10000 + 10000 + 20250 + 10000 + 15000);
}

// Hadoop's rule waits SPECULATIVE_LAG (60 s) before it backs a task up.
TEST(SimSpeculation, HadoopWaitsItsLag) {
  Scenario sc = SlowNode();
  sc.speculation.name = "hadoop";
  const RunResult r = MustRun(sc, "fifo");
  EXPECT_EQ(r.backups_launched, 1);
  EXPECT_EQ(r.backups_won, 1);
  EXPECT_GT(r.jobs[0].finish_ms, 70000);
  EXPECT_LT(r.jobs[0].finish_ms, 105000);
}

// Records the progress scores the speculator sees; backs nothing up.
class Probe : public sched::Speculator {
 public:
  struct Seen {
    int64_t now;
    sched::Attempt map0, reduce0;
  };
  explicit Probe(std::vector<Seen>* seen) : seen_(seen) {}
  const char* name() const override { return "probe"; }
  std::vector<sched::BackupChoice> Choose(const sched::ClusterState& s, const sched::Heartbeat& hb,
                                          bool maps) override {
    if (maps && !s.jobs().empty()) {
      const sched::Job& j = s.job(0);
      seen_->push_back({hb.now, j.maps[0].run, j.reduces[0].run});
    }
    return {};
  }

 private:
  std::vector<Seen>* seen_;
};

// Map 0 on node 0 (factor 0.1, no network: no read) reports progress
// elapsed / 100 s at each of node 0's heartbeats (every 1000 ms from 0);
// the reduce, launched while map 0 runs, reports a third of the two map
// outputs of three it has copied.
TEST(SimSpeculation, ProgressIsReportedAtTheNodesHeartbeats) {
  Scenario sc = SlowNode();
  auto w = MakeWorkload(sc);
  ASSERT_TRUE(w.ok());
  std::vector<Probe::Seen> seen;
  SimHost host(sc, *w);
  host.SetSpeculator(std::make_unique<Probe>(&seen));
  auto policy = sched::MakeScheduler("fifo", {}, sched::SchedulerEnv{});
  ASSERT_TRUE(host.Run(std::move(policy).value(), false).ok());
  int map_reports = 0, copy_reports = 0;
  for (const Probe::Seen& s : seen) {
    if (s.now >= 100000) break;  // map 0 is done
    if (s.map0.progress_ms > 0) {
      ++map_reports;
      EXPECT_EQ(s.map0.progress_ms % 1000, 0) << s.now;
      EXPECT_NEAR(s.map0.progress, static_cast<double>(s.map0.progress_ms) / 100000, 1e-12) << s.now;
    }
    if (s.reduce0.number >= 0 && s.reduce0.progress_ms > s.reduce0.start_ms) {
      ++copy_reports;
      EXPECT_NEAR(s.reduce0.progress, 2.0 / 9.0, 1e-12) << s.now;
    }
  }
  EXPECT_GT(map_reports, 50);
  EXPECT_GT(copy_reports, 50);
}

// Node 0 frozen in [2000, 22000): map 0 (launched at 0) ends 20 s late.
// A node frozen from the start heartbeats to no one: nothing runs there.
TEST(SimSpeculation, AFrozenNodeMakesNoProgressAndGetsNoTask) {
  Scenario sc = SmallScenario();
  sc.run.episodes.push_back(SpeedEpisode{0, 2000, 20000, 0});
  RunResult r = MustRun(sc, "fifo");
  EXPECT_DOUBLE_EQ(r.map_response_ms_sum, 30000 + 10333 + 10666);
  sc.run.episodes = {SpeedEpisode{0, 0, 50000, 0}};
  r = MustRun(sc, "fifo");
  EXPECT_EQ(r.stopped, "done");
  EXPECT_EQ(r.node_maps[0], 0);
  // Half speed from 2000: 2000 ms of work by then, the other 8000 take
  // 16000 ms.
  sc.run.episodes = {SpeedEpisode{0, 2000, 20000, 0.5}};
  r = MustRun(sc, "fifo");
  EXPECT_DOUBLE_EQ(r.map_response_ms_sum, 18000 + 10333 + 10666);
}

// Attempts are conserved with backups under task failures and a lost
// node: every task succeeds once (maps again when their output was lost),
// and launches = successes + failed + killed losers.
TEST(SimSpeculation, AttemptsAreConservedWithBackupsAndFailures) {
  Scenario sc = SmallScenario(/*nodes=*/20, 1, 0, /*jobs=*/30, /*maps=*/10, 10000, /*gap_ms=*/3000);
  sc.cluster.speeds.push_back(SpeedGroup{{}, 0.2, 0.1});  // 100 s maps: past Hadoop's 60 s lag
  sc.run.task_failure_prob = 0.1;
  sc.run.failures.push_back(NodeFailure{5, 40000, 90000});
  sc.run.episodes.push_back(SpeedEpisode{7, 20000, 30000, 0});
  for (const char* speculator : {"late", "hadoop"}) {
    SCOPED_TRACE(speculator);
    sc.speculation.name = speculator;
    auto w = MakeWorkload(sc);
    ASSERT_TRUE(w.ok());
    SimHost host(sc, *w);
    host.SetSpeculator(std::move(sched::MakeSpeculator(speculator, {})).value());
    auto r = host.Run(std::move(sched::MakeScheduler("fair", {}, sched::SchedulerEnv{})).value(), false);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->stopped, "done");
    EXPECT_GT(r->backups_launched, 0);
    EXPECT_GT(r->failed_attempts, 0);
    int64_t launches = 0, successes = 0;
    for (size_t j = 0; j < host.map_launches().size(); ++j) {
      for (size_t i = 0; i < host.map_launches()[j].size(); ++i) {
        EXPECT_GE(host.map_successes()[j][i], 1);
        launches += host.map_launches()[j][i];
        successes += host.map_successes()[j][i];
      }
      for (size_t i = 0; i < host.reduce_launches()[j].size(); ++i) {
        EXPECT_EQ(host.reduce_successes()[j][i], 1);
        launches += host.reduce_launches()[j][i];
        successes += host.reduce_successes()[j][i];
      }
    }
    EXPECT_EQ(launches, successes + r->failed_attempts + r->attempts_killed);
    EXPECT_EQ(launches, r->map_launches + r->reduce_launches);  // backups included
    EXPECT_LE(r->backups_won, r->attempts_killed);
    EXPECT_LE(r->wasted_ms, r->task_ms);
  }
}

// The same seed, the same bytes, with backups, speeds and episodes.
TEST(SimSpeculation, RunsAreReproducible) {
  Scenario sc = SmallScenario(20, 1, 0, 30, 10, 10000, 3000);
  sc.cluster.speeds.push_back(SpeedGroup{{}, 0.2, 0.25});
  sc.speculation.name = "late";
  sc.speculation_given = true;
  EXPECT_EQ(RunsToJson({MustRun(sc, "fifo")}), RunsToJson({MustRun(sc, "fifo")}));
}

// ---- Scenario keys and the command line ----

const char* kFile = R"(
name = "t"
[cluster]
nodes = 10
[[job_types]]
name = "j"
map = 1000
[workload]
arrival = "fixed"
jobs = 3
[[schedulers]]
name = "fifo"
)";

Result<Scenario> Parse(const std::string& extra) {
  return ParseScenario(std::string(kFile) + extra, "t.toml", "", {});
}

TEST(SimSpeculationFile, KeysAreRead) {
  auto sc = Parse(R"(
[speculation]
name = "late"
params = { cap = 0.2 }
[[schedulers]]
name = "fair"
speculation = { name = "hadoop" }
[[cluster.speeds]]
fraction = 0.1
factor = 0.25
[[cluster.speeds]]
nodes = [1, 2]
factor = 0.5
[[run.episodes]]
node = 3
at_ms = 1000
for_ms = 2000
factor = 0
)");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_TRUE(sc->speculation_given);
  EXPECT_EQ(sc->speculation.name, "late");
  EXPECT_EQ(std::get<double>(sc->speculation.params.at("cap")), 0.2);
  EXPECT_FALSE(sc->schedulers[0].speculation.has_value());
  EXPECT_EQ(sc->schedulers[1].speculation->name, "hadoop");
  ASSERT_EQ(sc->cluster.speeds.size(), 2u);
  EXPECT_EQ(sc->cluster.speeds[1].nodes, (std::vector<int>{1, 2}));
  ASSERT_EQ(sc->run.episodes.size(), 1u);
  EXPECT_EQ(sc->run.episodes[0].factor, 0);
  // 10 % of 10 nodes at 0.25, then nodes 1 and 2 at 0.5.
  auto w = MakeWorkload(*sc);
  ASSERT_TRUE(w.ok());
  SimHost host(*sc, *w);
  int quarter = 0;
  for (int n = 0; n < 10; ++n) quarter += host.speeds().FactorAt(n, 0) == 0.25;
  EXPECT_EQ(quarter, 1);
  EXPECT_EQ(host.speeds().FactorAt(1, 0), 0.5);
  EXPECT_TRUE(host.speeds().Frozen(3, 1500));
  EXPECT_FALSE(Parse("").value().speculation_given);
}

TEST(SimSpeculationFile, ErrorsListTheValidNames) {
  auto message = [](const std::string& extra) { return Parse(extra).status().message(); };
  EXPECT_EQ(message("[speculation]\nname = \"fast\"\n"),
            "t.toml: 'speculation': unknown speculator 'fast' (valid: hadoop, late, none)");
  EXPECT_NE(message("[speculation]\nname = \"late\"\nparams = { gap = 1 }\n")
                .find("speculator 'late': unknown parameter 'gap' (parameters: cap, slow_node_percentile"),
            std::string::npos);
  EXPECT_NE(message("[[schedulers]]\nname = \"fair\"\nspeculation = { name = \"x\" }\n")
                .find("unknown speculator 'x' (valid: hadoop, late, none)"),
            std::string::npos);
  EXPECT_NE(message("[[cluster.speeds]]\nnodes = [10]\nfactor = 0.5\n").find("'cluster.speeds[0].nodes'"),
            std::string::npos);
  EXPECT_NE(message("[[cluster.speeds]]\nfraction = 0.1\n").find("'cluster.speeds[0].factor' is required"),
            std::string::npos);
  EXPECT_NE(message("[[cluster.speeds]]\nnodes = [1]\nfraction = 0.1\nfactor = 2\n").find("exactly one"),
            std::string::npos);
  EXPECT_NE(message("[[run.episodes]]\nnode = 1\nfor_ms = 10\n").find("'run.episodes[0].factor' is required"),
            std::string::npos);
  EXPECT_NE(message("[[run.episodes]]\nnode = 1\nat_ms = 0\nfor_ms = 10\nfactor = 0\n"
                    "[[run.episodes]]\nnode = 1\nat_ms = 5\nfor_ms = 10\nfactor = 0.5\n")
                .find("overlaps an earlier episode of node 1"),
            std::string::npos);
}

int Cli(const std::vector<std::string>& args, std::string* out, std::string* err) {
  std::vector<const char*> argv = {"mr-sim"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream o, e;
  const int rc = RunCli(static_cast<int>(argv.size()), argv.data(), o, e);
  *out = o.str();
  *err = e.str();
  return rc;
}

// --speculator replaces [speculation]; a bad name or parameter is one line
// listing the valid ones, exit 2. Without a speculator the output has no
// speculation figures (as before speculation existed).
TEST(SimSpeculationCli, SpeculatorOption) {
  const std::string file = testing::TempDir() + "/spec.toml";
  std::ofstream(file) << kFile;
  std::string out, err;
  ASSERT_EQ(Cli({"run", file, "--quiet", "--json"}, &out, &err), 0) << err;
  EXPECT_EQ(out.find("backups_launched"), std::string::npos);
  ASSERT_EQ(Cli({"run", file, "--quiet", "--json", "--speculator", "late,cap=0.5"}, &out, &err), 0) << err;
  EXPECT_NE(out.find("\"speculator\": \"late\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"cap\": \"0.5\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"backups_launched\": 0"), std::string::npos) << out;
  EXPECT_EQ(Cli({"run", file, "--quiet", "--speculator", "fast"}, &out, &err), 2);
  EXPECT_EQ(err, "mr-sim: " + file + ": 'speculation': unknown speculator 'fast' (valid: hadoop, late, none)\n");
  EXPECT_EQ(Cli({"run", file, "--quiet", "--speculator", "late,lag=3"}, &out, &err), 2);
  EXPECT_NE(err.find("unknown parameter 'lag' (parameters: cap, slow_node_percentile"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  ASSERT_EQ(Cli({"run", file, "--quiet", "--speculator", "hadoop"}, &out, &err), 0) << err;
  EXPECT_NE(out.find("speculator  backups"), std::string::npos) << out;
}

}  // namespace
}  // namespace mr::sim
