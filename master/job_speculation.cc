// JobTracker: the end of a race between a task's two attempts. Backups are
// launched at the heartbeat (job_tracker.cc, sched::SpeculateAt); here the
// first attempt to succeed wins and the other is killed at once.
#include <spdlog/spdlog.h>

#include "master/job_tracker_internal.h"

namespace mr::master {

// The loser is killed by the next heartbeat reply to its worker; a worker
// deletes a killed attempt's local files, and the master deletes the output
// file of any attempt that is not the task's accepted one when it reports
// (ApplyReport), and the job's attempt directory when the job ends.
void JobTracker::SettleRace(ActiveJob& job, bool is_map, int32_t index, sched::NodeId winner) {
  const sched::Job& sj = state_.job(job.sid);
  auto settle = [&](const auto& t) {
    if (t.backup_node == sched::kNoNode) return;
    const bool backup_won = winner == t.backup_node;
    const sched::NodeId loser = backup_won ? t.node : t.backup_node;
    const sched::Attempt& lost = backup_won ? t.run : t.backup;
    pb::TaskRef ref;
    ref.set_job_id(job.record.id());
    ref.set_is_map(is_map);
    ref.set_index(index);
    ref.set_attempt(lost.number);
    const std::string& loser_name = node_names_[static_cast<size_t>(loser)];
    kills_[loser_name].push_back(ref);
    KeepEndedAttempt(job, is_map, index, loser, AttemptEnd::kKilled,
                     "attempt " + std::to_string(backup_won ? t.backup.number : t.run.number) + " on " +
                         node_names_[static_cast<size_t>(winner)] + " finished first");
    job.record.set_speculation_wasted_ms(job.record.speculation_wasted_ms() +
                                         std::max<int64_t>(0, Now() - lost.start_ms));
    if (backup_won) job.record.set_backups_won(job.record.backups_won() + 1);
    spdlog::info("job {} {} {}: attempt {} on {} won; attempt {} on {} is killed", job.record.id(),
                 is_map ? "map" : "reduce", index, backup_won ? t.backup.number : t.run.number,
                 node_names_[static_cast<size_t>(winner)], lost.number, loser_name);
  };
  if (is_map) {
    settle(sj.maps[static_cast<size_t>(index)]);
  } else {
    settle(sj.reduces[static_cast<size_t>(index)]);
  }
}

// The backup takes the original's place when the original is the one
// dropped: the map's recorded locality becomes the backup's.
void JobTracker::DropAttempt(ActiveJob& job, bool is_map, int32_t index, sched::NodeId node,
                             bool failed) {
  if (is_map && state_.job(job.sid).maps[static_cast<size_t>(index)].node == node) {
    ActiveJob::MapExtra& extra = job.maps[static_cast<size_t>(index)];
    extra.locality = extra.backup_locality;
  }
  state_.DropAttempt(job.sid, is_map, index, node, failed);
}

}  // namespace mr::master
