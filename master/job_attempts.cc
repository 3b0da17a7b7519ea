// JobTracker: the attempts a job's record shows besides its accepted tasks
// (docs/status-page.md, "Attempts") — the ones running now, with their
// progress, and every one that failed, was killed or was lost, with its node
// and error. `mrctl job show` and the job page print them; the history keeps
// the ended ones, bounded per job.
#include "master/job_tracker_internal.h"
#include "scheduler/speculator.h"

namespace mr::master {
namespace {

// Ended attempts a job's record keeps: a job whose tasks fail over and over
// keeps its last ones (the first are counted, not listed).
constexpr int kMaxEndedAttempts = 200;

const char* EndName(JobTracker::AttemptEnd end) {
  switch (end) {
    case JobTracker::AttemptEnd::kFailed:
      return "failed";
    case JobTracker::AttemptEnd::kKilled:
      return "killed";
    case JobTracker::AttemptEnd::kLost:
      return "lost";
  }
  return "failed";
}

// The attempt of task `t` on `node` (its original or its backup), or null.
template <typename Task>
const sched::Attempt* AttemptAt(const Task& t, sched::NodeId node, bool* backup) {
  if (t.state != sched::TaskState::kRunning || node == sched::kNoNode) return nullptr;
  *backup = node == t.backup_node;
  if (t.node == node) return &t.run;
  return *backup ? &t.backup : nullptr;
}

}  // namespace

void JobTracker::KeepEndedAttempt(ActiveJob& job, bool is_map, int32_t index, sched::NodeId node,
                                  AttemptEnd end, const std::string& why) {
  const sched::Job& sj = state_.job(job.sid);
  bool backup = false;
  const sched::Attempt* a = is_map ? AttemptAt(sj.maps[static_cast<size_t>(index)], node, &backup)
                                   : AttemptAt(sj.reduces[static_cast<size_t>(index)], node, &backup);
  if (a == nullptr) return;
  auto* ended = job.record.mutable_ended_attempts();
  if (ended->size() >= kMaxEndedAttempts) {
    ended->DeleteSubrange(0, 1);
    job.record.set_ended_attempts_dropped(job.record.ended_attempts_dropped() + 1);
  }
  pb::AttemptRecord* t = ended->Add();
  DescribeAttempt(is_map, index, node, *a, backup, t);
  t->set_state(EndName(end));
  t->set_error(why);
  t->set_end_ms(clock_->WallMs());
  if (metrics_) metrics_->AttemptEnded(is_map, EndName(end));
}

// An attempt's identity, start and progress as the master last heard them.
void JobTracker::DescribeAttempt(bool is_map, int32_t index, sched::NodeId node, const sched::Attempt& a,
                                 bool backup, pb::AttemptRecord* t) const {
  t->set_is_map(is_map);
  t->set_index(index);
  t->set_attempt(a.number);
  t->set_node(node_names_[static_cast<size_t>(node)]);
  t->set_start_ms(WallOf(a.start_ms));
  t->set_progress(static_cast<float>(a.progress));
  t->set_progress_rate(sched::ProgressRate(a, sched::TaskState::kRunning, Now()));
  if (a.progress_ms > a.start_ms) t->set_progress_ms(WallOf(a.progress_ms));
  t->set_speculative(backup);
}

void JobTracker::AddRunningAttempts(const ActiveJob& job, pb::JobRecord* r) const {
  const sched::Job& sj = state_.job(job.sid);
  const auto add = [&](bool is_map, int32_t index, sched::NodeId node, const sched::Attempt& a,
                       bool backup) {
    pb::AttemptRecord* t = r->add_running_attempts();
    DescribeAttempt(is_map, index, node, a, backup, t);
    t->set_state("running");
  };
  const auto add_task = [&](bool is_map, const auto& task) {
    if (task.state != sched::TaskState::kRunning) return;
    if (task.node != sched::kNoNode) add(is_map, task.index, task.node, task.run, false);
    if (task.backup_node != sched::kNoNode) add(is_map, task.index, task.backup_node, task.backup, true);
  };
  for (const sched::MapTask& m : sj.maps) add_task(true, m);
  for (const sched::ReduceTask& t : sj.reduces) add_task(false, t);
}

}  // namespace mr::master
