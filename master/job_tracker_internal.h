// Private state of the JobTracker, shared by its files: job_tracker.cc
// (membership), job_heartbeat.cc, job_reports.cc, job_speculation.cc,
// job_recovery.cc and job_records.cc (submission, records, history). Not an interface.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "jobs/codec.h"
#include "master/job_tracker.h"
#include "master/master_internal.h"

namespace mr::master {

// What the master remembers of one unfinished job beyond sched::Job.
struct JobTracker::ActiveJob {
  struct Split {
    std::string file;       // DFS path of the input file
    int64_t file_length = 0;
    int64_t offset = 0;     // of the block in the file
  };
  struct MapExtra {
    Split split;
    sched::Locality locality = sched::Locality::kNode;  // of the running attempt
    sched::Locality backup_locality = sched::Locality::kNode;  // of a backup attempt
    int failures = 0;       // failed attempts (lost workers do not count)
    int fetch_failures = 0; // reports against the current output
    bool output_lost = false;
    int record = -1;        // where its record is in record.maps(); -1 = none yet
  };
  struct ReduceExtra {
    int failures = 0;
    int record = -1;        // where its record is in record.reduces(); -1 = none yet
  };

  sched::JobId sid = 0;
  pb::JobRecord record;     // what history keeps; tasks appended as they finish
  std::vector<MapExtra> maps;
  std::vector<ReduceExtra> reduces;
  // record.attempt_places()[0, places_kept) are in the history's "p/" keys
  // (JobHistory::PutProgress); 0 after a restart, so the first progress
  // writes them all again (idempotent: a place's key is its position).
  int places_kept = 0;
};

// The job's temporary output directory (renamed to the output on success).
inline std::string TempDir(int64_t job_id) { return "/.mr/jobs/" + std::to_string(job_id) + "/out"; }

// "part-00003", "part-m-00003"; with the job's output compression
// "part-00003.gz", "part-m-00003.zst" (jobs/codec.h).
inline std::string PartName(const char* prefix, int32_t index, const pb::JobSpec& spec) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%05d", index);
  const auto codec = jobs::ParseOutputCompression(spec.output_compression());
  return prefix + std::string(buf) + jobs::CodecSuffix(codec.ok() ? *codec : jobs::Codec::kNone);
}

// One attempt of one of a job's tasks.
struct RunningAttempt {
  bool is_map = true;
  int32_t index = 0;
  int32_t attempt = 0;
};

// The number of the attempt of the task (map or reduce) running on `node`
// — its original or its backup — or -1.
template <typename Task>
int32_t AttemptOn(const Task& t, sched::NodeId node) {
  if (t.state != sched::TaskState::kRunning || node == sched::kNoNode) return -1;
  if (t.node == node) return t.run.number;
  if (t.backup_node == node) return t.backup.number;
  return -1;
}

inline int32_t AttemptOn(const sched::ClusterState& state, sched::JobId job, bool is_map,
                         int32_t index, sched::NodeId node) {
  const sched::Job& j = state.job(job);
  return is_map ? AttemptOn(j.maps[static_cast<size_t>(index)], node)
                : AttemptOn(j.reduces[static_cast<size_t>(index)], node);
}

// The job's attempts running on `node`.
inline std::vector<RunningAttempt> RunningOn(const sched::ClusterState& state, sched::JobId job,
                                             sched::NodeId node) {
  std::vector<RunningAttempt> out;
  const sched::Job& j = state.job(job);
  for (const auto& m : j.maps) {
    if (const int32_t a = AttemptOn(m, node); a >= 0) out.push_back({true, m.index, a});
  }
  for (const auto& r : j.reduces) {
    if (const int32_t a = AttemptOn(r, node); a >= 0) out.push_back({false, r.index, a});
  }
  return out;
}

// Every attempt of the job running now, with its node, by node (NodeId
// order), then maps before reduces, then index: RunningOn for each node in
// turn, in one pass over the job's tasks (EndJob at 4,000 workers called
// RunningOn per worker: 8,000,000 task checks for a job of 2,000 maps).
inline std::vector<std::pair<sched::NodeId, RunningAttempt>> RunningAttempts(
    const sched::ClusterState& state, sched::JobId job) {
  std::vector<std::pair<sched::NodeId, RunningAttempt>> out;
  auto add = [&](const auto& t, bool is_map) {
    if (t.state != sched::TaskState::kRunning) return;
    if (t.node != sched::kNoNode) out.push_back({t.node, {is_map, t.index, t.run.number}});
    if (t.backup_node != sched::kNoNode) out.push_back({t.backup_node, {is_map, t.index, t.backup.number}});
  };
  const sched::Job& j = state.job(job);
  for (const auto& m : j.maps) add(m, true);
  for (const auto& r : j.reduces) add(r, false);
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  return out;
}

// Adds b into a.
inline void AddTraffic(pb::Traffic* a, const pb::Traffic& b) {
  a->set_local(a->local() + b.local());
  a->set_same_dc(a->same_dc() + b.same_dc());
  a->set_other_dc(a->other_dc() + b.other_dc());
}

// Adds what one attempt moved (its map input, shuffle and output
// replication) to `record`'s retried bytes: called for an attempt that will
// not be the task's counted run (JobRecord.retried).
template <typename Task>
void AddRetried(pb::JobRecord* record, const Task& attempt) {
  if constexpr (requires { attempt.input(); }) AddTraffic(record->mutable_retried(), attempt.input());
  if constexpr (requires { attempt.shuffle(); }) AddTraffic(record->mutable_retried(), attempt.shuffle());
  if constexpr (requires { attempt.output(); }) AddTraffic(record->mutable_retried(), attempt.output());
}

}  // namespace mr::master
