// The JobTracker's timing rules, driven by a ManualClock (master/clock.h):
// speculation's lag, the race between a task's two attempts, and what a
// backup's failure or its worker's loss leaves running. A real JobTracker
// over a real RocksDB namespace and history in a temporary directory; the
// workers are heartbeats this test writes, as a worker would send them.
#include "master/job_tracker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <google/protobuf/util/message_differencer.h>

#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <map>
#include <set>

#include "master/job_history.h"
#include "scheduler/speculator.h"

namespace mr::master {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Attempt {
  int32_t index = 0;
  int32_t attempt = 0;
  bool operator<(const Attempt& o) const { return std::tie(index, attempt) < std::tie(o.index, o.attempt); }
};

class JobTrackerTest : public ::testing::Test {
 protected:
  // Three workers of one map slot each; a map-only WordCount over a file
  // of three blocks, one on each worker; speculation by Hadoop's rule.
  void SetUp() override { Start("hadoop"); }

  void Start(const std::string& speculator, const sched::SchedulerParams& params = {}) {
    char tmpl[] = "/tmp/mr-job-tracker-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    config_.master.data_dir = dir_ + "/master";
    fs::create_directories(config_.master.data_dir);
    auto ns = dfs::Namespace::Open(dir_ + "/ns");
    ASSERT_TRUE(ns.ok()) << ns.status().ToString();
    ns_ = std::move(ns).value();
    pb::INode file;
    file.set_kind(pb::INode::FILE);
    file.set_replication(1);
    file.set_input_type("text");
    for (uint64_t b = 1; b <= 3; ++b) {
      pb::BlockRef* ref = file.add_blocks();
      ref->set_id(b);
      ref->set_bytes(100);
    }
    file.set_length(300);
    ASSERT_TRUE(ns_->AddFile("/in", file, false, nullptr).ok());
    DfsAccess dfs;
    dfs.ns = ns_.get();
    dfs.replicas = [](uint64_t block) { return std::vector<std::string>{"w" + std::to_string(block)}; };
    dfs.remove = [this](const std::string& path, bool recursive) {
      removed_.insert(path);
      std::vector<uint64_t> freed;
      return ns_->Delete(path, recursive, &freed);
    };
    dfs.copy = [](uint64_t, const std::string&, const std::string&) {};
    auto policy = sched::MakeScheduler("fifo", {}, sched::SchedulerEnv{});
    ASSERT_TRUE(policy.ok());
    auto spec = sched::MakeSpeculator(speculator, params);
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    auto tracker = JobTracker::Create(config_, std::move(policy).value(), std::move(spec).value(),
                                      std::move(dfs), &clock_);
    ASSERT_TRUE(tracker.ok()) << tracker.status().ToString();
    t_ = std::move(tracker).value();
    for (const char* w : {"w1", "w2", "w3"}) {
      pb::WorkerInfo info;
      info.set_id(w);
      info.set_address("127.0.0.1:1");
      info.set_datacenter("dc1");
      info.set_map_slots(1);
      info.set_reduce_slots(1);
      t_->AddWorker(info);
      t_->WorkerUp(w);
    }
    pb::JobSpec job;
    job.set_job("wordcount");
    job.add_inputs("/in");
    job.set_output("/out");
    job.set_reducers(0);
    pb::SubmitJobReply reply;
    ASSERT_TRUE(t_->Submit(job, &reply).ok());
    id_ = reply.job_id();
  }

  void TearDown() override {
    t_.reset();
    ns_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // A heartbeat from `worker`: every attempt it runs is listed RUNNING at
  // the progress set for it, except those given a final state in `ends`.
  // Returns the reply; its launches join what the worker runs, its kills
  // leave it.
  pb::HeartbeatReply Beat(const std::string& worker, const std::map<Attempt, pb::TaskReport::State>& ends = {}) {
    pb::HeartbeatRequest req;
    req.set_worker_id(worker);
    for (const Attempt& a : std::set<Attempt>(running_[worker])) {
      pb::TaskReport* r = req.add_tasks();
      r->set_job_id(id_);
      r->set_is_map(true);
      r->set_index(a.index);
      r->set_attempt(a.attempt);
      r->set_progress(static_cast<float>(progress_[{worker, a.index}]));
      auto end = ends.find(a);
      if (end == ends.end()) {
        r->set_state(pb::TaskReport::RUNNING);
        continue;
      }
      r->set_state(end->second);
      r->mutable_input()->set_other_dc(1000);  // what the attempt read from another datacenter
      running_[worker].erase(a);
      if (end->second != pb::TaskReport::SUCCEEDED) {
        r->set_error("boom");
        continue;
      }
      // The attempt's output file, as a worker's put leaves it.
      const std::string file = "/.mr/jobs/" + std::to_string(id_) + "/attempts/m" +
                               std::to_string(a.index) + "-" + std::to_string(a.attempt);
      pb::INode out;
      out.set_kind(pb::INode::FILE);
      EXPECT_TRUE(ns_->AddFile(file, out, true, nullptr).ok());
      r->set_output_file(file);
      r->set_run_ms(1000);
    }
    pb::HeartbeatReply reply;
    t_->Heartbeat(req, &reply);
    for (const pb::TaskSpec& s : reply.launches()) running_[worker].insert({s.index(), s.attempt()});
    for (const pb::TaskRef& k : reply.kills()) kills_[worker].insert({k.index(), k.attempt()});
    return reply;
  }

  // True when w2 or w3 is given the next attempt of `a`'s task (a task that
  // failed on w1 goes elsewhere first).
  bool RelaunchedElsewhere(const Attempt& a) {
    for (const char* w : {"w2", "w3"}) {
      const pb::HeartbeatReply reply = Beat(w);
      for (const pb::TaskSpec& s : reply.launches()) {
        if (s.index() == a.index && s.attempt() == a.attempt + 1) return true;
      }
    }
    return false;
  }

  pb::JobRecord Record() {
    pb::JobRecord r;
    EXPECT_TRUE(t_->Show(id_, /*summary=*/false, &r).ok());
    return r;
  }

  // Every worker takes the map of its own block at t = 0 and reports its
  // progress at 5 s; w1 and w2 finish theirs at 10 s; w3's crawls at a
  // tenth of their speed until `until_ms`.
  void StragglerOnW3(int64_t until_ms) {
    for (const char* w : {"w1", "w2", "w3"}) Beat(w);
    ASSERT_EQ(running_["w3"].size(), 1u);
    straggler_ = *running_["w3"].begin();
    clock_.Advance(5000);
    for (const char* w : {"w1", "w2", "w3"}) {
      progress_[{w, running_[w].begin()->index}] = std::string(w) == "w3" ? 0.05 : 0.5;
      Beat(w);
    }
    clock_.Advance(5000);
    progress_[{"w3", straggler_.index}] = 0.1;
    Beat("w3");
    Beat("w1", {{*running_["w1"].begin(), pb::TaskReport::SUCCEEDED}});
    Beat("w2", {{*running_["w2"].begin(), pb::TaskReport::SUCCEEDED}});
    Beat("w3");
    clock_.Advance(until_ms - 10000);
  }

  ManualClock clock_;
  ClusterConfig config_;
  std::string dir_;
  std::unique_ptr<dfs::Namespace> ns_;
  std::unique_ptr<JobTracker> t_;
  int64_t id_ = 0;
  std::map<std::string, std::set<Attempt>> running_, kills_;
  std::map<std::pair<std::string, int32_t>, double> progress_;
  std::set<std::string> removed_;
  Attempt straggler_;
};

// A worker's heartbeat lists every attempt it runs; one the master placed
// there that the list leaves out was lost (the heartbeat settles this from
// the node's slot counts, without a scan of every task: issue 29).
TEST_F(JobTrackerTest, AnAttemptTheWorkerDoesNotListIsLost) {
  Beat("w1");
  ASSERT_EQ(running_["w1"].size(), 1u);
  const Attempt lost = *running_["w1"].begin();
  Beat("w1");
  EXPECT_EQ(Record().maps_running(), 1) << "listed: still running";
  running_["w1"].clear();  // the worker forgot it (a crash of its task runner)
  EXPECT_EQ(Beat("w1").launches_size(), 1) << "w1's slot is free again";
  EXPECT_TRUE(RelaunchedElsewhere(lost)) << "the task is pending again";
}

// The same when the list is as long as the master's but names another
// attempt (a stale one): only current attempts count as listed.
TEST_F(JobTrackerTest, AStaleAttemptInTheListDoesNotStandForTheCurrentOne) {
  Beat("w1");
  ASSERT_EQ(running_["w1"].size(), 1u);
  const Attempt current = *running_["w1"].begin();
  running_["w1"] = {{current.index, current.attempt + 7}};
  EXPECT_EQ(Beat("w1").launches_size(), 1) << "w1's slot is free again";
  EXPECT_TRUE(RelaunchedElsewhere(current));
}

TEST_F(JobTrackerTest, HadoopBacksUpAStragglerOnlyAfterSixtySeconds) {
  StragglerOnW3(59999);
  EXPECT_EQ(Beat("w1").launches_size(), 0) << "before SPECULATIVE_LAG";
  clock_.Advance(1);
  const pb::HeartbeatReply reply = Beat("w1");
  ASSERT_EQ(reply.launches_size(), 1);
  EXPECT_EQ(reply.launches(0).index(), straggler_.index);
  EXPECT_EQ(reply.launches(0).attempt(), 1);
  EXPECT_EQ(Record().backups_launched(), 1);
  EXPECT_EQ(Beat("w2").launches_size(), 0) << "one backup per task";
}

TEST_F(JobTrackerTest, TheBackupWinsAndTheOriginalIsKilledAndItsOutputRemoved) {
  StragglerOnW3(60000);
  Beat("w1");  // launches the backup
  clock_.Advance(5000);
  Beat("w1", {{{straggler_.index, 1}, pb::TaskReport::SUCCEEDED}});
  pb::JobRecord r = Record();
  EXPECT_EQ(r.state(), "succeeded");
  EXPECT_EQ(r.backups_won(), 1);
  EXPECT_EQ(r.speculation_wasted_ms(), 65000) << "the original ran 65 s for nothing";
  ASSERT_EQ(r.maps_size(), 3);
  for (const pb::MapTaskRecord& m : r.maps()) {
    if (m.index() != straggler_.index) continue;
    EXPECT_EQ(m.node(), "w1");
    EXPECT_TRUE(m.speculative());
    EXPECT_EQ(m.attempt(), 1);
  }
  // w3 is told to stop attempt 0; if it finished meanwhile, its file goes.
  Beat("w3");
  EXPECT_TRUE(kills_["w3"].count(straggler_));
  EXPECT_TRUE(ns_->Lookup("/out/part-m-" + std::string(4, '0') + std::to_string(straggler_.index)).ok());
}

TEST_F(JobTrackerTest, TheOriginalWinsAndTheBackupIsKilled) {
  StragglerOnW3(60000);
  Beat("w1");
  clock_.Advance(2000);
  Beat("w3", {{straggler_, pb::TaskReport::SUCCEEDED}});
  pb::JobRecord r = Record();
  EXPECT_EQ(r.state(), "succeeded");
  EXPECT_EQ(r.backups_launched(), 1);
  EXPECT_EQ(r.backups_won(), 0);
  EXPECT_EQ(r.speculation_wasted_ms(), 2000);
  Beat("w1", {{{straggler_.index, 1}, pb::TaskReport::SUCCEEDED}});  // too late: its output goes
  EXPECT_TRUE(kills_["w1"].count({straggler_.index, 1}));
  const std::string late = "/.mr/jobs/" + std::to_string(id_) + "/attempts/m" +
                           std::to_string(straggler_.index) + "-1";
  EXPECT_FALSE(ns_->Lookup(late).ok()) << "the losing attempt's output is deleted";
  EXPECT_FALSE(ns_->Lookup("/.mr/jobs/" + std::to_string(id_)).ok())
      << "and the job's directory its put re-created";
  EXPECT_EQ(Record().retried().other_dc(), 1000) << "what it read counts in the ended job's INT";
}

TEST_F(JobTrackerTest, AFailedBackupLeavesTheOriginalRunning) {
  StragglerOnW3(60000);
  Beat("w1");
  Beat("w1", {{{straggler_.index, 1}, pb::TaskReport::FAILED}});
  pb::JobRecord r = Record();
  EXPECT_EQ(r.state(), "running");
  EXPECT_EQ(r.failed_attempts(), 1);
  EXPECT_EQ(r.maps_running(), 1) << "the original runs on; the task is not pending";
  Beat("w3", {{straggler_, pb::TaskReport::SUCCEEDED}});
  EXPECT_EQ(Record().state(), "succeeded");
}

TEST_F(JobTrackerTest, LosingTheOriginalsWorkerLeavesTheBackup) {
  StragglerOnW3(60000);
  Beat("w1");
  t_->WorkerLost("w3");
  EXPECT_EQ(Record().maps_running(), 1);
  EXPECT_EQ(Beat("w2").launches_size(), 0) << "nothing to run again: the backup carries the task";
  Beat("w1", {{{straggler_.index, 1}, pb::TaskReport::SUCCEEDED}});
  const pb::JobRecord r = Record();
  EXPECT_EQ(r.state(), "succeeded");
  for (const pb::MapTaskRecord& m : r.maps()) {
    if (m.index() != straggler_.index) continue;
    EXPECT_EQ(m.node(), "w1");
    EXPECT_EQ(m.locality(), "datacenter") << "the backup's locality, not the lost original's";
  }
}

TEST_F(JobTrackerTest, NoSpeculatorNoBackups) {
  TearDown();
  running_.clear(), kills_.clear(), progress_.clear();
  Start("none");
  StragglerOnW3(600000);
  EXPECT_EQ(Beat("w1").launches_size(), 0);
  EXPECT_EQ(Record().speculator(), "none");
}

TEST_F(JobTrackerTest, LateBacksUpTheStragglerOnceItsRateFallsBehind) {
  TearDown();
  running_.clear(), kills_.clear(), progress_.clear();
  Start("late");
  // At 10 s w1 is done; w2's map runs at 0.05/s (as w1's did), w3's at
  // 0.01/s, below the 25th percentile of the rates, with 90 s left against
  // w1's 10 s: backed up on w1 at once (no 60 s lag).
  StragglerOnW3(10000);
  EXPECT_EQ(Record().backups_launched(), 1);
  ASSERT_TRUE(running_["w1"].count({straggler_.index, 1}));
  EXPECT_EQ(Record().speculator(), "late");
}

// The live view: while the straggler's backup runs, the record lists both
// attempts with their progress, rate and start; the backup is marked.
TEST_F(JobTrackerTest, TheRecordListsRunningAttemptsWithProgressAndBackups) {
  StragglerOnW3(60000);
  Beat("w1");  // launches the backup
  const pb::JobRecord r = Record();
  ASSERT_EQ(r.running_attempts_size(), 2) << r.DebugString();
  const pb::AttemptRecord& original = r.running_attempts(0);
  const pb::AttemptRecord& backup = r.running_attempts(1);
  EXPECT_EQ(original.node(), "w3");
  EXPECT_EQ(original.index(), straggler_.index);
  EXPECT_EQ(original.state(), "running");
  EXPECT_FALSE(original.speculative());
  EXPECT_FLOAT_EQ(original.progress(), 0.1f);
  EXPECT_NEAR(original.progress_rate(), 0.1 / 60, 1e-9) << "progress per second since its launch";
  EXPECT_EQ(original.start_ms(), clock_.WallMs() - 60000);
  EXPECT_EQ(original.progress_ms(), clock_.WallMs() - 50000) << "its last report, at 10 s";
  EXPECT_EQ(backup.node(), "w1");
  EXPECT_TRUE(backup.speculative());
  EXPECT_EQ(backup.attempt(), 1);
  EXPECT_EQ(backup.start_ms(), clock_.WallMs());
  pb::JobListReply list;
  ASSERT_TRUE(t_->List(&list).ok());
  ASSERT_EQ(list.jobs_size(), 1);
  EXPECT_EQ(list.jobs(0).running_attempts_size(), 0) << "a listed record stays small";
}

// The summary a follower polls is the whole record without its task
// records: every sum over them, the counts, the running attempts the same.
// (`mrctl job run --wait` polled whole records, and a job of 10,000 maps
// has one past the frame limit: the follower lost the master for 120 s.)
TEST_F(JobTrackerTest, TheSummaryIsTheRecordWithoutItsTaskRecords) {
  StragglerOnW3(60000);
  Beat("w1");  // launches the backup
  pb::JobRecord whole = Record();
  ASSERT_EQ(whole.maps_size(), 2) << "w1's and w2's maps ended";
  ASSERT_GT(whole.attempt_places_size(), 0);
  pb::JobRecord summary;
  ASSERT_TRUE(t_->Show(id_, /*summary=*/true, &summary).ok());
  EXPECT_EQ(summary.maps_size(), 0);
  EXPECT_EQ(summary.attempt_places_size(), 0);
  EXPECT_EQ(summary.maps_node_local(), 2);
  whole.clear_maps();
  whole.clear_reduces();
  whole.clear_attempt_places();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(summary, whole))
      << "summary:\n" << summary.DebugString() << "whole, without tasks:\n" << whole.DebugString();
  pb::JobRecord after;
  ASSERT_TRUE(t_->Show(id_, /*summary=*/false, &after).ok());
  EXPECT_EQ(after.maps_size(), 2) << "a summary leaves the job's record whole";
}

// Where each attempt ran is kept apart from the job's header in the
// history, written as it grows: a task's success writes the places
// launched since the last one, not the job's every place (the copy a
// 4,000-worker profile found at every task's end: issue 29).
TEST_F(JobTrackerTest, ARunningJobsAttemptPlacesAreKeptApartFromItsHeader) {
  for (const char* w : {"w1", "w2", "w3"}) Beat(w);
  Beat("w1", {{*running_["w1"].begin(), pb::TaskReport::SUCCEEDED}});
  Beat("w2", {{*running_["w2"].begin(), pb::TaskReport::FAILED}});
  Beat("w1");  // the failed map runs again there
  Beat("w3", {{*running_["w3"].begin(), pb::TaskReport::SUCCEEDED}});
  const pb::JobRecord live = Record();
  ASSERT_EQ(live.state(), "running");
  ASSERT_EQ(live.attempt_places_size(), 4) << live.DebugString();
  t_.reset();  // the history is the master's own RocksDB: close it first
  auto history = JobHistory::Open(config_.master.data_dir + "/history");
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  auto header = (*history)->Get(id_);
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_EQ(header->attempt_places_size(), 0) << "the header carries no places";
  pb::JobRecord loaded = *header;
  (*history)->LoadTasks(&loaded);
  EXPECT_EQ(loaded.maps_size(), 2);
  ASSERT_EQ(loaded.attempt_places_size(), 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(loaded.attempt_places(i),
                                                                   live.attempt_places(i)))
        << "place " << i << ": " << loaded.attempt_places(i).DebugString();
  }
}

// The losing attempt of a race is kept as killed, naming the winner.
TEST_F(JobTrackerTest, TheRaceLoserIsKeptAsKilled) {
  StragglerOnW3(60000);
  Beat("w1");
  clock_.Advance(5000);
  Beat("w1", {{{straggler_.index, 1}, pb::TaskReport::SUCCEEDED}});
  const pb::JobRecord r = Record();
  ASSERT_EQ(r.ended_attempts_size(), 1) << r.DebugString();
  EXPECT_EQ(r.ended_attempts(0).node(), "w3");
  EXPECT_EQ(r.ended_attempts(0).state(), "killed");
  EXPECT_EQ(r.ended_attempts(0).error(), "attempt 1 on w1 finished first");
  EXPECT_EQ(r.running_attempts_size(), 0);
}

// A job whose map fails max_attempts times fails, and its record keeps
// every failed attempt with its node and error (before: only the job's
// last error).
TEST_F(JobTrackerTest, AFailedJobKeepsEveryFailedAttempt) {
  for (const char* w : {"w1", "w2", "w3"}) Beat(w);
  const Attempt first = *running_["w1"].begin();
  for (const char* w : {"w2", "w3"}) Beat(w, {{*running_[w].begin(), pb::TaskReport::SUCCEEDED}});
  std::vector<std::string> nodes;
  for (int i = 0; i < config_.jobs.max_attempts; ++i) {
    std::string on;
    for (const char* w : {"w1", "w2", "w3"}) {
      if (!running_[w].empty()) on = w;
    }
    ASSERT_FALSE(on.empty()) << "attempt " << i << " of map " << first.index << " is not running";
    nodes.push_back(on);
    clock_.Advance(1000);
    Beat(on, {{*running_[on].begin(), pb::TaskReport::FAILED}});
    for (const char* w : {"w1", "w2", "w3"}) Beat(w);  // the next attempt launches
  }
  const pb::JobRecord r = Record();
  EXPECT_EQ(r.state(), "failed");
  ASSERT_EQ(r.ended_attempts_size(), config_.jobs.max_attempts) << r.DebugString();
  for (int i = 0; i < r.ended_attempts_size(); ++i) {
    const pb::AttemptRecord& a = r.ended_attempts(i);
    EXPECT_EQ(a.state(), "failed");
    EXPECT_EQ(a.index(), first.index);
    EXPECT_EQ(a.attempt(), i);
    EXPECT_EQ(a.node(), nodes[static_cast<size_t>(i)]);
    EXPECT_EQ(a.error(), "boom");
    EXPECT_EQ(a.end_ms() - a.start_ms(), 1000);
  }
  EXPECT_EQ(r.running_attempts_size(), 0);
}

// Killing a job keeps the attempts it stopped, as killed.
TEST_F(JobTrackerTest, AKilledJobKeepsTheAttemptsItStopped) {
  for (const char* w : {"w1", "w2", "w3"}) Beat(w);
  ASSERT_TRUE(t_->Kill(id_).ok());
  const pb::JobRecord r = Record();
  EXPECT_EQ(r.state(), "killed");
  ASSERT_EQ(r.ended_attempts_size(), 3) << r.DebugString();
  for (const pb::AttemptRecord& a : r.ended_attempts()) {
    EXPECT_EQ(a.state(), "killed");
    EXPECT_EQ(a.error(), "the job was killed by request");
  }
  EXPECT_EQ(r.running_attempts_size(), 0);
}

// The attempts of a lost worker are kept as lost.
TEST_F(JobTrackerTest, ALostWorkersAttemptIsKeptAsLost) {
  for (const char* w : {"w1", "w2", "w3"}) Beat(w);
  t_->WorkerLost("w2");
  const pb::JobRecord r = Record();
  ASSERT_EQ(r.ended_attempts_size(), 1);
  EXPECT_EQ(r.ended_attempts(0).node(), "w2");
  EXPECT_EQ(r.ended_attempts(0).state(), "lost");
  EXPECT_EQ(r.ended_attempts(0).error(), "worker w2 lost");
  EXPECT_EQ(r.running_attempts_size(), 2);
}

}  // namespace
}  // namespace mr::master
