// Speculators (scheduler/speculator.h) and the state of a task with two
// attempts. Time is the `now` each call is handed, as for policies: these
// are the manual-clock tests of the speculation rules.
//
// The conformance part holds every registered speculator to the host's
// contract, as conformance_test.cc holds every policy: a choice is a running
// task with no backup and no attempt on the heartbeating node; nothing while
// work is pending; SpeculateAt never fills more than the node's free slots;
// the same state gives the same choices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "scheduler/hadoop_speculator.h"
#include "scheduler/late_speculator.h"
#include "scheduler/speculator.h"
#include "tests/scheduler/test_host.h"

namespace mr::sched {
namespace {

using test::CheckConsistent;
using test::MakeJob;
using test::MakePolicy;
using test::TestHost;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<Speculator> MakeSpec(const std::string& name, const SchedulerParams& params = {}) {
  auto made = MakeSpeculator(name, params);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  return made.ok() ? std::move(made).value() : nullptr;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const BackupChoice& c) {
  return os << (c.is_map ? "map " : "reduce ") << c.job << "/" << c.index;
}

namespace {

// Launches every pending map of `job` on `nodes` in turn, at `now`.
void LaunchAllMaps(ClusterState& state, JobId job, const std::vector<NodeId>& nodes, TimeMs now) {
  for (size_t i = 0; i < state.job(job).maps.size(); ++i) {
    state.LaunchMap(job, static_cast<int32_t>(i), nodes[i % nodes.size()], now);
  }
}

// Ends map `index` at `now` on `node`, as a host does: progress 1, then Finish.
void Finish(ClusterState& state, JobId job, int32_t index, NodeId node, TimeMs now) {
  const TimeMs start = state.job(job).maps[static_cast<size_t>(index)].run.start_ms;
  state.SetProgress(job, true, index, node, 1.0, now);
  state.FinishMap(job, index, static_cast<double>(now - start), node);
}

// ---------------------------------------------------------------- state

TEST(BackupStateTest, ABackupTakesASlotAndTheWinnerTakesTheTask) {
  TestHost host(MakePolicy("fifo"));
  const NodeId a = host.AddNode(0, 1, 1), b = host.AddNode(0, 1, 1);
  const JobId j = host.AddJob(MakeJob({{a}}, 0));
  ClusterState& s = host.state();
  s.LaunchMap(j, 0, a, 100);
  s.LaunchBackup(j, true, 0, b, 5000);
  EXPECT_EQ(CheckConsistent(s), "");
  EXPECT_EQ(s.node(b).free_map_slots(), 0);  // the backup holds b's slot
  EXPECT_EQ(s.job(j).running_maps, 1);       // one task, two attempts
  EXPECT_EQ(s.running_backups(true), 1);
  EXPECT_EQ(s.job(j).maps[0].backup.number, 1);
  EXPECT_EQ(s.job(j).maps[0].backup.start_ms, 5000);

  s.FinishMap(j, 0, 10, /*winner=*/b);
  EXPECT_EQ(CheckConsistent(s), "");
  EXPECT_EQ(s.job(j).maps[0].node, b);  // the output lives where the winner ran
  EXPECT_EQ(s.job(j).maps[0].run.number, 1);
  EXPECT_EQ(s.node(a).free_map_slots(), 1);  // the loser's slot is free (the host kills it)
  EXPECT_EQ(s.running_backups(true), 0);
}

TEST(BackupStateTest, DroppingOneAttemptLeavesTheOtherRunning) {
  TestHost host(MakePolicy("fifo"));
  const NodeId a = host.AddNode(0, 1, 1), b = host.AddNode(0, 1, 1);
  const JobId j = host.AddJob(MakeJob({{a}}, 1));
  ClusterState& s = host.state();
  s.LaunchMap(j, 0, a, 0);
  s.LaunchBackup(j, true, 0, b, 10);
  s.DropAttempt(j, true, 0, a, /*failed=*/true);  // the original failed: the backup carries on
  EXPECT_EQ(CheckConsistent(s), "");
  EXPECT_EQ(s.job(j).maps[0].state, TaskState::kRunning);
  EXPECT_EQ(s.job(j).maps[0].node, b);
  EXPECT_EQ(s.job(j).maps[0].run.number, 1);
  EXPECT_THAT(s.job(j).maps[0].failed_on, ElementsAre(a));
  EXPECT_EQ(s.job(j).pending_maps(), 0);

  // Reduces too, and a finished job frees both attempts' slots.
  Finish(s, j, 0, b, 20);
  s.LaunchReduce(j, 0, a, 30);
  s.LaunchBackup(j, false, 0, b, 40);
  EXPECT_EQ(CheckConsistent(s), "");
  s.FinishJob(j);
  EXPECT_EQ(CheckConsistent(s), "");
  EXPECT_EQ(s.node(a).running_reduces + s.node(b).running_reduces, 0);
}

TEST(BackupStateTest, ProgressIsKeptPerAttempt) {
  TestHost host(MakePolicy("fifo"));
  const NodeId a = host.AddNode(0), b = host.AddNode(0), c = host.AddNode(0);
  const JobId j = host.AddJob(MakeJob({{a}}, 0));
  ClusterState& s = host.state();
  s.LaunchMap(j, 0, a, 0);
  s.LaunchBackup(j, true, 0, b, 1000);
  s.SetProgress(j, true, 0, a, 0.5, 2000);
  s.SetProgress(j, true, 0, b, 1.7, 2000);  // clamped
  s.SetProgress(j, true, 0, c, 0.9, 2000);  // no attempt there: ignored
  EXPECT_DOUBLE_EQ(s.job(j).maps[0].run.progress, 0.5);
  EXPECT_DOUBLE_EQ(s.job(j).maps[0].backup.progress, 1.0);
  EXPECT_DOUBLE_EQ(ProgressRate(s.job(j).maps[0].run, TaskState::kRunning, 2000), 0.25);
  EXPECT_DOUBLE_EQ(ProgressRate(s.job(j).maps[0].run, TaskState::kRunning, 4000), 0.125)
      << "a silent attempt's rate falls as time passes";
}

// ---------------------------------------------------------------- hadoop

class HadoopSpeculatorTest : public ::testing::Test {
 protected:
  // Four nodes; a job of 4 maps, one per node, launched at 0; map 3's node
  // has a free second slot.
  HadoopSpeculatorTest() : host(MakePolicy("fifo")) {
    nodes = {host.AddNode(0, 1, 1), host.AddNode(0, 1, 1), host.AddNode(1, 1, 1),
             host.AddNode(1, 2, 1)};
    job = host.AddJob(MakeJob({{nodes[0]}, {nodes[1]}, {nodes[2]}, {nodes[3]}}, 0));
    LaunchAllMaps(host.state(), job, nodes, 0);
  }
  std::vector<BackupChoice> Choose(NodeId node, TimeMs now) {
    return spec->Choose(host.state(), Heartbeat{node, now}, true);
  }

  TestHost host;
  std::vector<NodeId> nodes;
  JobId job = 0;
  std::unique_ptr<Speculator> spec = MakeSpec("hadoop");
};

TEST_F(HadoopSpeculatorTest, BacksUpATaskFarBehindItsJobAfterTheLag) {
  ClusterState& s = host.state();
  for (int i = 0; i < 3; ++i) s.SetProgress(job, true, i, nodes[static_cast<size_t>(i)], 0.9, 59000);
  s.SetProgress(job, true, 3, nodes[3], 0.4, 59000);  // average 0.775: 0.375 behind
  EXPECT_TRUE(Choose(nodes[3], 59999).empty()) << "not before SPECULATIVE_LAG (60 s)";
  EXPECT_TRUE(Choose(nodes[3], 60000).empty()) << "its own node runs it; no free slot elsewhere";
  Finish(s, job, 0, nodes[0], 60000);  // frees a slot on node 0
  EXPECT_THAT(Choose(nodes[0], 60000), ElementsAre(BackupChoice{job, true, 3}));
}

TEST_F(HadoopSpeculatorTest, LeavesATaskWithinTheGapAlone) {
  ClusterState& s = host.state();
  for (int i = 0; i < 3; ++i) s.SetProgress(job, true, i, nodes[static_cast<size_t>(i)], 0.7, 100);
  s.SetProgress(job, true, 3, nodes[3], 0.6, 100);  // average 0.675: 0.075 behind
  Finish(s, job, 0, nodes[0], 100000);
  EXPECT_TRUE(Choose(nodes[0], 100000).empty());
}

TEST_F(HadoopSpeculatorTest, PendingWorkComesFirst) {
  ClusterState& s = host.state();
  s.SetProgress(job, true, 3, nodes[3], 0.0, 100);
  Finish(s, job, 0, nodes[0], 100000);
  host.AddJob(MakeJob({{nodes[0]}}, 0));  // a pending map anywhere
  EXPECT_TRUE(Choose(nodes[0], 100000).empty());
}

// ---------------------------------------------------------------- late

class LateSpeculatorTest : public ::testing::Test {
 protected:
  // Eight nodes, one map slot each, 10 % cap = 1 backup at a time unless
  // the test raises it. A job of 8 maps, one per node, launched at 0.
  LateSpeculatorTest() : host(MakePolicy("fifo")) {
    for (int i = 0; i < 8; ++i) nodes.push_back(host.AddNode(i % 2, 1, 1));
    std::vector<std::vector<NodeId>> blocks;
    for (NodeId n : nodes) blocks.push_back({n});
    job = host.AddJob(MakeJob(blocks, 0));
    LaunchAllMaps(host.state(), job, nodes, 0);
  }
  void Progress(int index, double p, TimeMs now) {
    host.state().SetProgress(job, true, index, nodes[static_cast<size_t>(index)], p, now);
  }
  std::vector<BackupChoice> Choose(const Speculator& s, NodeId node, TimeMs now) {
    return const_cast<Speculator&>(s).Choose(host.state(), Heartbeat{node, now}, true);
  }

  TestHost host;
  std::vector<NodeId> nodes;
  JobId job = 0;
};

TEST_F(LateSpeculatorTest, BacksUpTheTaskWithTheLongestTimeLeftOnAFastNode) {
  auto late = MakeSpec("late");
  // At 10 s: maps 0-3 done at 8 s; 4 and 5 at 0.8; 6 at 0.2 (rate 0.02/s,
  // 40 s left), 7 at 0.1 (0.01/s, 90 s left).
  for (int i = 0; i < 4; ++i) Finish(host.state(), job, i, nodes[static_cast<size_t>(i)], 8000);
  Progress(4, 0.8, 10000), Progress(5, 0.8, 10000), Progress(6, 0.2, 10000), Progress(7, 0.1, 10000);
  EXPECT_THAT(Choose(*late, nodes[0], 10000), ElementsAre(BackupChoice{job, true, 7}));
}

TEST(LateSlowNodeTest, RefusesASlowNode) {
  TestHost host(MakePolicy("fifo"));
  std::vector<NodeId> n;
  for (int i = 0; i < 4; ++i) n.push_back(host.AddNode(0, 2, 1));
  const JobId j = host.AddJob(MakeJob({{n[0]}, {n[1]}, {n[2]}, {n[3]}, {n[1]}, {n[2]}}, 0));
  ClusterState& s = host.state();
  const std::vector<NodeId> on = {n[0], n[1], n[2], n[3], n[1], n[2]};
  for (int32_t i = 0; i < 6; ++i) s.LaunchMap(j, i, on[static_cast<size_t>(i)], 0);
  for (int32_t i : {1, 2, 4, 5}) Finish(s, j, i, on[static_cast<size_t>(i)], 8000);
  s.SetProgress(j, true, 0, n[0], 0.05, 10000);
  s.SetProgress(j, true, 3, n[3], 0.9, 10000);
  // Node totals 0.05, 2, 2, 0.9: the 25th percentile is 0.69, so node 0 is
  // slow and gets no backup; node 3 is not, and takes map 0's (190 s left).
  auto late = MakeSpec("late");
  EXPECT_TRUE(late->Choose(s, Heartbeat{n[0], 10000}, true).empty());
  EXPECT_THAT(late->Choose(s, Heartbeat{n[3], 10000}, true), ElementsAre(BackupChoice{j, true, 0}));
}

TEST_F(LateSpeculatorTest, CapsBackupsAtAFractionOfTheSlots) {
  auto late = MakeSpec("late");  // 10 % of 8 slots: at least 1
  for (int i = 0; i < 4; ++i) Finish(host.state(), job, i, nodes[static_cast<size_t>(i)], 8000);
  Progress(4, 0.8, 10000), Progress(5, 0.8, 10000), Progress(6, 0.2, 10000), Progress(7, 0.1, 10000);
  host.state().LaunchBackup(job, true, 7, nodes[0], 10000);
  EXPECT_TRUE(Choose(*late, nodes[1], 10000).empty()) << "one backup runs: the cap is reached";
  auto wide = MakeSpec("late", {{"cap", 0.25}});  // 2 backups
  EXPECT_THAT(Choose(*wide, nodes[1], 10000), ElementsAre(BackupChoice{job, true, 6}));
}

TEST_F(LateSpeculatorTest, OnlyTasksSlowerThanTheSlowTaskThreshold) {
  auto late = MakeSpec("late", {{"require_gain", false}});
  for (int i = 0; i < 4; ++i) Finish(host.state(), job, i, nodes[static_cast<size_t>(i)], 8000);
  // Rates: the done maps 1/8 s, the running ones all 0.09/s: the 25th
  // percentile is 0.09, and no task is below it.
  for (int i = 4; i < 8; ++i) Progress(i, 0.9, 10000);
  EXPECT_TRUE(Choose(*late, nodes[0], 10000).empty());
}

TEST_F(LateSpeculatorTest, RequireGainSkipsATaskAFreshAttemptWouldNotBeat) {
  // Done maps took 8 s. Map 7 at 0.5 after 10 s: 10 s left > 8 s: worth it.
  // At 0.6: 6.7 s left < 8 s: not with require_gain; yes without.
  for (int i = 0; i < 4; ++i) Finish(host.state(), job, i, nodes[static_cast<size_t>(i)], 8000);
  for (int i = 4; i < 7; ++i) Progress(i, 0.95, 10000);
  Progress(7, 0.6, 10000);
  EXPECT_TRUE(Choose(*MakeSpec("late"), nodes[0], 10000).empty());
  EXPECT_THAT(Choose(*MakeSpec("late", {{"require_gain", false}}), nodes[0], 10000),
              ElementsAre(BackupChoice{job, true, 7}));
  Progress(7, 0.5, 10000);
  EXPECT_THAT(Choose(*MakeSpec("late"), nodes[0], 10000), ElementsAre(BackupChoice{job, true, 7}));
}

TEST_F(LateSpeculatorTest, RequireGainWaitsForADoneTask) {
  // Nothing done yet: no estimate of a fresh attempt, no backup (a node
  // must be free: a second slot on node 0).
  host.state().SetLive(nodes[0], false);  // SetSlots REQUIRES a node that is not live
  host.state().SetSlots(nodes[0], 2, 1);
  host.state().SetLive(nodes[0], true);
  for (int i = 0; i < 7; ++i) Progress(i, 0.5, 10000);
  Progress(7, 0.01, 10000);
  EXPECT_TRUE(Choose(*MakeSpec("late"), nodes[0], 10000).empty());
  EXPECT_THAT(Choose(*MakeSpec("late", {{"require_gain", false}}), nodes[0], 10000),
              ElementsAre(BackupChoice{job, true, 7}));
}

TEST_F(LateSpeculatorTest, WaitsForMinRun) {
  for (int i = 0; i < 7; ++i) Finish(host.state(), job, i, nodes[static_cast<size_t>(i)], 500);
  Progress(7, 0.0, 1000);
  EXPECT_TRUE(Choose(*MakeSpec("late"), nodes[0], 1999).empty());
  EXPECT_THAT(Choose(*MakeSpec("late"), nodes[0], 2000), ElementsAre(BackupChoice{job, true, 7}));
}

TEST(LateReduceTest, BacksUpAReduceOnlyAfterTheMapsAndCountsFreshTimeFromThem) {
  TestHost host(MakePolicy("fifo"));
  std::vector<NodeId> n;
  for (int i = 0; i < 4; ++i) n.push_back(host.AddNode(0, 1, 1));
  Job job = MakeJob({{n[0]}}, 3);
  job.slowstart = 0;  // reduces start with the map
  const JobId j = host.AddJob(std::move(job));
  ClusterState& s = host.state();
  s.LaunchMap(j, 0, n[0], 0);
  for (int32_t r = 0; r < 3; ++r) s.LaunchReduce(j, r, n[static_cast<size_t>(r) + 1], 0);
  s.SetProgress(j, false, 2, n[3], 0.1, 9000);
  auto late = MakeSpec("late");
  EXPECT_TRUE(late->Choose(s, Heartbeat{n[0], 9000}, false).empty())
      << "a map still runs: the reduces wait for it, not for their nodes";
  Finish(s, j, 0, n[0], 10000);
  // Reduces 0 and 1 end at 11 s (1 s after the last map); reduce 2, on a
  // slow node, is at 2/3 at 14 s: 7 s left against a fresh attempt's 1 s.
  for (int32_t r : {0, 1}) {
    s.SetProgress(j, false, r, n[static_cast<size_t>(r) + 1], 1.0, 11000);
    s.FinishReduce(j, r, n[static_cast<size_t>(r) + 1]);
  }
  s.SetProgress(j, false, 2, n[3], 2.0 / 3.0, 14000);
  EXPECT_THAT(late->Choose(s, Heartbeat{n[0], 14000}, false), ElementsAre(BackupChoice{j, false, 2}));
}

TEST(PercentileTest, InterpolatesBetweenRanks) {
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 25), 1.75);
  EXPECT_DOUBLE_EQ(Percentile({5}, 25), 5);
  EXPECT_DOUBLE_EQ(Percentile({}, 25), 0);
  EXPECT_DOUBLE_EQ(Percentile({1, 2}, 100), 2);
}

// ---------------------------------------------------------------- registry

TEST(SpeculatorRegistryTest, NamesAndErrors) {
  std::vector<std::string> names;
  for (const SpeculatorInfo* s : RegisteredSpeculators()) names.push_back(s->name);
  EXPECT_THAT(names, ElementsAre("hadoop", "late", "none"));
  auto bad = MakeSpeculator("lat", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "unknown speculator 'lat' (valid: hadoop, late, none)");
  auto param = MakeSpeculator("late", {{"cpa", 0.2}});
  ASSERT_FALSE(param.ok());
  EXPECT_THAT(param.status().message(), HasSubstr("unknown parameter 'cpa'"));
  EXPECT_THAT(param.status().message(), HasSubstr("cap, slow_node_percentile"));
  auto range = MakeSpeculator("late", {{"cap", 1.5}});
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.status().message(), "speculator 'late': cap must be in (0, 1]");
  EXPECT_FALSE(MakeSpeculator("hadoop", {{"gap", "big"}}).ok());
}

// ---------------------------------------------------------------- conformance

class SpeculatorConformanceTest : public ::testing::TestWithParam<std::string> {};

// A seeded random run: nodes at different speeds, jobs arriving, attempts
// progressing at their node's speed, backups launched through SpeculateAt
// at every heartbeat, the first attempt to finish winning. Every choice is
// checked against the contract, the state stays consistent, every job
// completes, and a rerun gives the same backups.
std::vector<std::tuple<JobId, bool, int32_t, NodeId>> RandomRun(const std::string& name,
                                                               uint64_t seed) {
  TestHost host(MakePolicy("fifo"));
  auto spec = MakeSpec(name, name == "none" ? SchedulerParams{}
                                             : name == "hadoop" ? SchedulerParams{{"lag_ms", 3000}}
                                                                : SchedulerParams{});
  std::mt19937_64 rng(seed);
  std::vector<NodeId> nodes;
  std::vector<double> speed;  // progress per second of an attempt on the node
  for (int i = 0; i < 6; ++i) {
    nodes.push_back(host.AddNode(i % 2, 2, 1));
    speed.push_back(i == 5 ? 0.02 : 0.2 + 0.05 * static_cast<double>(i));
  }
  for (int j = 0; j < 3; ++j) {
    std::vector<std::vector<NodeId>> blocks;
    for (int m = 0; m < 8; ++m) blocks.push_back({nodes[rng() % nodes.size()]});
    host.AddJob(MakeJob(blocks, 2));
  }
  std::vector<std::tuple<JobId, bool, int32_t, NodeId>> backups;
  struct Recorder : BackupLauncher {
    TestHost* host;
    NodeId node = kNoNode;
    TimeMs now = 0;
    std::vector<std::tuple<JobId, bool, int32_t, NodeId>>* out;
    void LaunchBackup(const BackupChoice& c) override {
      const Job& j = host->job(c.job);
      const bool ok = c.is_map ? MayBackUp(j.maps[static_cast<size_t>(c.index)], node)
                               : MayBackUp(j.reduces[static_cast<size_t>(c.index)], node);
      EXPECT_TRUE(ok) << "backup of a task that is not running alone elsewhere";
      if (!ok) return;
      host->state().LaunchBackup(c.job, c.is_map, c.index, node, now);
      out->emplace_back(c.job, c.is_map, c.index, node);
    }
  } recorder;
  recorder.host = &host;
  recorder.out = &backups;
  const TimeMs step = 500;
  for (TimeMs now = step; now < 600000; now += step) {
    host.set_now(now);
    ClusterState& s = host.state();
    // Progress, then ends: an attempt is done when its progress reaches 1.
    for (JobId id : std::vector<JobId>(s.active_jobs())) {
      for (int kind = 0; kind < 2; ++kind) {
        const size_t n = kind == 0 ? s.job(id).maps.size() : s.job(id).reduces.size();
        for (size_t i = 0; i < n; ++i) {
          const Job& j = s.job(id);
          const bool map = kind == 0;
          const TaskState st = map ? j.maps[i].state : j.reduces[i].state;
          if (st != TaskState::kRunning) continue;
          NodeId winner = kNoNode;
          for (const auto& [node, a] :
               {std::pair{map ? j.maps[i].node : j.reduces[i].node, map ? j.maps[i].run : j.reduces[i].run},
                std::pair{map ? j.maps[i].backup_node : j.reduces[i].backup_node,
                          map ? j.maps[i].backup : j.reduces[i].backup}}) {
            if (node == kNoNode) continue;
            const double p = speed[static_cast<size_t>(node)] * static_cast<double>(now - a.start_ms) / 1000.0;
            s.SetProgress(id, map, static_cast<int32_t>(i), node, std::min(p, 0.999), now);
            if (p >= 1.0 && winner == kNoNode) winner = node;
          }
          if (winner == kNoNode) continue;
          s.SetProgress(id, map, static_cast<int32_t>(i), winner, 1.0, now);
          if (map) {
            s.FinishMap(id, static_cast<int32_t>(i), 1, winner);
            host.policy().OnMapFinished(s, id, static_cast<int32_t>(i), now);
          } else {
            s.FinishReduce(id, static_cast<int32_t>(i), winner);
            host.policy().OnReduceFinished(s, id, static_cast<int32_t>(i), now);
          }
          const Job& after = s.job(id);
          if (after.finished_maps == static_cast<int>(after.maps.size()) &&
              after.finished_reduces == static_cast<int>(after.reduces.size())) {
            s.FinishJob(id);
            host.policy().OnJobFinished(s, id, now);
            break;
          }
        }
        if (s.job(id).done) break;
      }
    }
    const NodeId node = nodes[static_cast<size_t>(now / step) % nodes.size()];
    host.Heartbeat(node);
    recorder.node = node;
    recorder.now = now;
    const bool pending_maps = AnyPending(s, true), pending_reduces = AnyPending(s, false);
    const size_t before = backups.size();
    SpeculateAt(s, Heartbeat{node, now}, *spec, host.policy(), recorder);
    for (size_t b = before; b < backups.size(); ++b) {
      const bool is_map = std::get<1>(backups[b]);
      EXPECT_FALSE(is_map ? pending_maps : pending_reduces) << "a backup while work was pending";
    }
    EXPECT_EQ(CheckConsistent(s), "");
    if (s.active_jobs().empty()) break;
  }
  EXPECT_TRUE(host.state().active_jobs().empty()) << name << ": every job completes";
  return backups;
}

TEST_P(SpeculatorConformanceTest, KeepsTheContractUnderARandomRun) {
  for (uint64_t seed : {1, 2, 3}) {
    const auto first = RandomRun(GetParam(), seed);
    EXPECT_EQ(first, RandomRun(GetParam(), seed)) << "the same events give the same backups";
    if (GetParam() == "none") EXPECT_TRUE(first.empty());
  }
}

TEST_P(SpeculatorConformanceTest, ASlowNodesTaskGetsABackup) {
  if (GetParam() == "none") GTEST_SKIP() << "none never backs up";
  const auto backups = RandomRun(GetParam(), 7);
  EXPECT_FALSE(backups.empty()) << "node 5 runs at a tenth of the others' speed";
}

std::vector<std::string> SpeculatorNames() {
  std::vector<std::string> names;
  for (const SpeculatorInfo* s : RegisteredSpeculators()) names.push_back(s->name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllSpeculators, SpeculatorConformanceTest,
                         ::testing::ValuesIn(SpeculatorNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace mr::sched
