// SimHost, the task half: the Launcher calls a policy makes (with their
// REQUIRES checked as hard errors), task timing over the service and
// network models, and task ends. See host.h for the model.
#include <algorithm>
#include <cmath>

#include "sim/host.h"

namespace mr::sim {

using sched::JobId;
using sched::NodeId;
using sched::TaskState;

namespace {

int64_t Ceil(double ms) { return static_cast<int64_t>(std::ceil(ms - 1e-9)); }

bool Contains(const std::vector<NodeId>& v, NodeId n) {
  return std::find(v.begin(), v.end(), n) != v.end();
}

std::string TaskName(JobId job, int32_t index, bool is_map) {
  return std::string(is_map ? "map " : "reduce ") + std::to_string(job) + "/" + std::to_string(index);
}

}  // namespace

void SimHost::Remove(std::vector<std::pair<JobId, int32_t>>& v, JobId job, int32_t index) {
  auto it = std::find(v.begin(), v.end(), std::make_pair(job, index));
  if (it != v.end()) {
    *it = v.back();
    v.pop_back();
  }
}

void SimHost::Violation(const std::string& what) {
  if (error_.empty()) error_ = std::string(policy_->name()) + ": " + what + " (at " +
                               std::to_string(now_) + " ms)";
}

// TestHost::Check, as hard errors.
bool SimHost::CheckLaunch(JobId job, int32_t index, bool is_map) {
  const std::string task = TaskName(job, index, is_map);
  if (current_ == sched::kNoNode) {
    Violation("launched " + task + " outside Assign");
    return false;
  }
  if (job < 0 || static_cast<size_t>(job) >= state_.jobs().size()) {
    Violation("launched " + task + " of an unknown job");
    return false;
  }
  const sched::Job& j = state_.job(job);
  const size_t count = is_map ? j.maps.size() : j.reduces.size();
  if (j.done) {
    Violation("launched " + task + " of a finished job");
  } else if (index < 0 || static_cast<size_t>(index) >= count) {
    Violation("launched " + task + ", which does not exist");
  } else if ((is_map ? j.maps[static_cast<size_t>(index)].state
                     : j.reduces[static_cast<size_t>(index)].state) != TaskState::kPending) {
    Violation("launched " + task + ", which is not pending");
  } else if ((is_map ? free_maps_ : free_reduces_) <= 0) {
    Violation("launched " + task + " beyond the node's free slots");
  } else if (!is_map && !j.reduces_may_start()) {
    Violation("launched " + task + " before slow-start");
  } else {
    --(is_map ? free_maps_ : free_reduces_);
    return true;
  }
  return false;
}

double SimHost::PartitionMb(JobId job) const {
  const SimJob& sj = wl_.jobs[static_cast<size_t>(job)];
  const JobType& type = sc_.job_types[static_cast<size_t>(sj.type)];
  const double fp = type.fp_wire >= 0 ? type.fp_wire : type.fp;
  return sj.reduce_ms.empty() ? 0 : sc_.data.block_mb * fp / static_cast<double>(sj.reduce_ms.size());
}

// The live holder nearest `to` (Distance), a random one among the nearest;
// with none live, the nearest of all (the data is taken as recoverable).
NodeId SimHost::NearestLiveReplica(const std::vector<NodeId>& replicas, NodeId to) {
  std::vector<NodeId> best;
  double best_d = 0;
  for (int pass = 0; pass < 2 && best.empty(); ++pass) {
    for (NodeId r : replicas) {
      if (pass == 0 && !state_.node(r).live) continue;
      const double d = state_.Distance(r, to);
      if (best.empty() || d < best_d) best = {r}, best_d = d;
      else if (d == best_d) best.push_back(r);
    }
  }
  return best.empty() ? sched::kNoNode : best[UniformIndex(rng_, best.size())];
}

void SimHost::LaunchMap(JobId job, int32_t index) {
  if (!error_.empty() || !CheckLaunch(job, index, /*is_map=*/true)) return;
  state_.LaunchMap(job, index, current_, now_);
  const sched::MapTask& m = state_.job(job).maps[static_cast<size_t>(index)];
  ++map_launches_[static_cast<size_t>(job)][static_cast<size_t>(index)];
  ++result_.map_launches;
  last_progress_ms_ = now_;
  MapRun& run = maps_[static_cast<size_t>(job)][static_cast<size_t>(index)].run;
  run = MapRun{};
  run.attempt = m.run.number;
  run.node = current_;
  StartMap(job, index, run, nullptr);
}

// Input: local, or a prefetch in flight to this node, or the nearest
// replica; then the compute, at the node's speed.
void SimHost::StartMap(JobId job, int32_t index, MapRun& run, const MapRun* backs_up) {
  const NodeId node = run.node;
  const sched::MapTask& m = state_.job(job).maps[static_cast<size_t>(index)];
  const SimJob& sj = wl_.jobs[static_cast<size_t>(job)];
  const JobType& type = sc_.job_types[static_cast<size_t>(sj.type)];
  const double mb = sc_.data.block_mb;
  const std::vector<NodeId>& holders = replicas_[m.block];
  double read = static_cast<double>(now_);
  Span span = Span::kNode;
  const auto flight = in_flight_.find(m.block * state_.nodes().size() + static_cast<size_t>(node));
  if (!Contains(holders, node) && flight != in_flight_.end()) {
    read = std::max(read, flight->second);
  } else if (!Contains(holders, node)) {
    const NodeId source = NearestLiveReplica(holders, node);
    if (source != sched::kNoNode) {
      span = net_->SpanOf(source, node);
      read = net_->Transfer(source, node, mb, read);
    } else {
      span = Span::kOffDatacenter;  // a split without location
    }
  }
  for (Tally* t : {&result_.all, &type_tally_[static_cast<size_t>(sj.type)]}) {
    t->input_mb[static_cast<int>(span)] += mb;
  }
  const ServiceSpec& s = sc_.service;
  const double slowdown[] = {1.0, s.rack_slowdown, s.remote_slowdown,
                             s.off_dc_slowdown > 0 ? s.off_dc_slowdown : s.remote_slowdown};
  const double compute = backs_up != nullptr ? backs_up->work_ms
                         : m.attempts == 1   ? sj.map_ms[static_cast<size_t>(index)]
                                             : type.map.Sample(rng_);
  run.launch_ms = now_;
  run.read_ms = read;
  run.work_ms = compute;
  run.end_ms = speeds_.End(node, read, compute * slowdown[static_cast<int>(span)]);
  run.full_end_ms = run.end_ms;
  run.level = state_.LocalityOf(node, m.replicas);
  if (sc_.run.task_failure_prob > 0 && Uniform01(rng_) < sc_.run.task_failure_prob) {
    run.fails = true;
    run.end_ms = static_cast<double>(now_) + Uniform01(rng_) * (run.end_ms - static_cast<double>(now_));
  }
  node_maps_[static_cast<size_t>(node)].emplace_back(job, index);
  events_.Push(Ceil(run.end_ms), EventKind::kMapEnd, job, index, run.attempt);
}

void SimHost::LaunchReduce(JobId job, int32_t index) {
  if (!error_.empty() || !CheckLaunch(job, index, /*is_map=*/false)) return;
  state_.LaunchReduce(job, index, current_, now_);
  ++reduce_launches_[static_cast<size_t>(job)][static_cast<size_t>(index)];
  ++result_.reduce_launches;
  last_progress_ms_ = now_;
  ReduceSim& s = reduces_[static_cast<size_t>(job)][static_cast<size_t>(index)];
  s.base_ms = -1;  // a new attempt of a pending task: a fresh compute time (as before backups)
  StartReduce(job, index, s.run, current_);
}

void SimHost::StartReduce(JobId job, int32_t index, ReduceRun& run, NodeId node) {
  const sched::Job& j = state_.job(job);
  const sched::ReduceTask& r = j.reduces[static_cast<size_t>(index)];
  run = ReduceRun{};
  run.attempt = node == r.node ? r.run.number : r.backup.number;
  run.node = node;
  run.launch_ms = now_;
  run.last_fetch_ms = static_cast<double>(now_);
  run.fetched.assign(j.maps.size(), false);
  run.fails = sc_.run.task_failure_prob > 0 && Uniform01(rng_) < sc_.run.task_failure_prob;
  node_reduces_[static_cast<size_t>(node)].emplace_back(job, index);
  for (const sched::MapTask& m : j.maps) {
    if (m.state == TaskState::kDone) Fetch(job, run, m.index);
  }
  MaybeCompleteReduce(job, index, run);
}

// The reduce attempt copies map `map`'s partition from the node the map ran on.
void SimHost::Fetch(JobId job, ReduceRun& run, int32_t map) {
  if (run.fetched[static_cast<size_t>(map)]) return;
  run.fetched[static_cast<size_t>(map)] = true;
  ++run.fetched_count;
  const sched::Job& j = state_.job(job);
  const NodeId from = j.maps[static_cast<size_t>(map)].node;
  const NodeId to = run.node;
  const double mb = PartitionMb(job);
  const Span span = net_->SpanOf(from, to);
  run.last_fetch_ms = std::max(run.last_fetch_ms, net_->Transfer(from, to, mb, static_cast<double>(now_)));
  run.input_mb += mb;
  const int type = wl_.jobs[static_cast<size_t>(job)].type;
  for (Tally* t : {&result_.all, &type_tally_[static_cast<size_t>(type)]}) {
    t->shuffle_mb[static_cast<int>(span)] += mb;
  }
}

// Once every partition is fetched, the reduce computes, then ends.
void SimHost::MaybeCompleteReduce(JobId job, int32_t reduce, ReduceRun& run) {
  const sched::Job& j = state_.job(job);
  if (run.scheduled || run.fetched_count < static_cast<int>(j.maps.size())) return;
  run.scheduled = true;
  const SimJob& sj = wl_.jobs[static_cast<size_t>(job)];
  const JobType& type = sc_.job_types[static_cast<size_t>(sj.type)];
  ReduceSim& s = reduces_[static_cast<size_t>(job)][static_cast<size_t>(reduce)];
  if (s.base_ms < 0) {
    s.base_ms = s.run.attempt == 0 ? sj.reduce_ms[static_cast<size_t>(reduce)] : type.reduce.Sample(rng_);
  }
  const double base = s.base_ms;
  // On a node at factor 1 throughout, the sum as it was before speeds.
  double end = speeds_.Uniform(run.node)
                   ? run.last_fetch_ms + base + type.reduce_ms_per_mb * run.input_mb
                   : speeds_.End(run.node, run.last_fetch_ms, base + type.reduce_ms_per_mb * run.input_mb);
  run.compute_ms = run.last_fetch_ms;
  run.end_ms = end;
  if (run.fails) {
    // A failing attempt fails at a uniform point of the part of its run
    // still ahead, [now, end]. Its end is known only now, when its last
    // map has finished (the same as its launch when every map had finished
    // by then); a point drawn over [launch, end] could lie in the past.
    const double from = static_cast<double>(now_);
    end = from + Uniform01(rng_) * (end - from);
  }
  events_.Push(Ceil(end), EventKind::kReduceEnd, job, reduce, run.attempt);
}

void SimHost::OnMapEnd(JobId job, int32_t index, int32_t attempt) {
  const sched::Job& j = state_.job(job);
  MapRun* found = j.done ? nullptr : RunningMap(job, index, attempt);
  if (found == nullptr) return;  // killed, dropped or lost
  const MapRun run = *found;
  const NodeId node = run.node;
  const bool raced = j.maps[static_cast<size_t>(index)].backup_node != sched::kNoNode;
  Remove(node_maps_[static_cast<size_t>(node)], job, index);
  AttemptEnded(run.launch_ms);
  if (run.fails) {
    ++result_.failed_attempts;
    if (raced) {
      DropAttempt(job, index, /*is_map=*/true, node, /*failed=*/true);  // the other runs on
    } else {
      state_.FailMap(job, index);
      CallPolicy([&] { policy_->OnTaskFailed(state_, job, index, /*is_map=*/true, now_); });
    }
    EndedOn(node);
    return;
  }
  sched::MapTask& mm = state_.mutable_job(job).maps[static_cast<size_t>(index)];
  mm.bytes_read = mm.bytes;
  mm.partition_bytes.assign(j.reduces.size(), static_cast<int64_t>(PartitionMb(job) * 1048576.0));
  SettleRace(job, index, /*is_map=*/true, node);
  state_.SetProgress(job, true, index, node, 1.0, now_);
  state_.FinishMap(job, index, static_cast<double>(now_ - run.launch_ms), node);
  ++map_successes_[static_cast<size_t>(job)][static_cast<size_t>(index)];
  maps_[static_cast<size_t>(job)][static_cast<size_t>(index)].run.done_ms = now_;
  CountMap(job, index, 1);
  for (const sched::ReduceTask& r : j.reduces) {
    if (r.state != TaskState::kRunning) continue;
    ReduceSim& s = reduces_[static_cast<size_t>(job)][static_cast<size_t>(r.index)];
    Fetch(job, s.run, index);
    MaybeCompleteReduce(job, r.index, s.run);
    if (r.backup_node == sched::kNoNode) continue;
    Fetch(job, s.backup, index);
    MaybeCompleteReduce(job, r.index, s.backup);
  }
  CallPolicy([&] { policy_->OnMapFinished(state_, job, index, now_); });
  MaybeFinishJob(job);
  EndedOn(node);
}

// The master's rule (master/job_records.cc): a map task counts once, by its
// last successful run, at the level judged when that run was launched.
void SimHost::CountMap(JobId job, int32_t index, int sign) {
  const MapRun& run = maps_[static_cast<size_t>(job)][static_cast<size_t>(index)].run;
  const int type = wl_.jobs[static_cast<size_t>(job)].type;
  for (Tally* t : {&result_.all, &type_tally_[static_cast<size_t>(type)]}) {
    t->maps_total += sign;
    t->maps_level[static_cast<int>(run.level)] += sign;
  }
  result_.node_maps[static_cast<size_t>(run.node)] += sign;
  result_.map_response_ms_sum +=
      sign * static_cast<double>(run.done_ms - state_.job(job).submit_ms);
  result_.map_run_ms_sum += sign * static_cast<double>(run.done_ms - run.launch_ms);
}

void SimHost::OnReduceEnd(JobId job, int32_t index, int32_t attempt) {
  const sched::Job& j = state_.job(job);
  ReduceRun* found = j.done ? nullptr : RunningReduce(job, index, attempt);
  if (found == nullptr) return;  // killed, dropped or lost
  const NodeId node = found->node;
  const int64_t launch_ms = found->launch_ms;
  const bool raced = j.reduces[static_cast<size_t>(index)].backup_node != sched::kNoNode;
  Remove(node_reduces_[static_cast<size_t>(node)], job, index);
  AttemptEnded(launch_ms);
  if (found->fails) {
    ++result_.failed_attempts;
    if (raced) {
      DropAttempt(job, index, /*is_map=*/false, node, /*failed=*/true);
    } else {
      state_.FailReduce(job, index);
      CallPolicy([&] { policy_->OnTaskFailed(state_, job, index, /*is_map=*/false, now_); });
    }
    EndedOn(node);
    return;
  }
  SettleRace(job, index, /*is_map=*/false, node);
  state_.SetProgress(job, false, index, node, 1.0, now_);
  state_.FinishReduce(job, index, node);
  ++reduce_successes_[static_cast<size_t>(job)][static_cast<size_t>(index)];
  result_.reduce_run_ms_sum += static_cast<double>(now_ - launch_ms);
  ++result_.reduces_done;
  CallPolicy([&] { policy_->OnReduceFinished(state_, job, index, now_); });
  MaybeFinishJob(job);
  EndedOn(node);
}

// ---- Prefetch (the Joint Scheduler's routing) ----

void SimHost::Prefetch(uint64_t block, NodeId from, NodeId to) {
  if (!error_.empty()) return;
  const std::string what = "prefetch of block " + std::to_string(block) + " from node " +
                           std::to_string(from) + " to node " + std::to_string(to);
  const auto nodes = static_cast<NodeId>(state_.nodes().size());
  if (current_ == sched::kNoNode && !in_tick_) return Violation(what + " outside Assign and OnTick");
  if (block >= replicas_.size()) return Violation(what + ": no such block");
  if (from < 0 || from >= nodes || to < 0 || to >= nodes || from == to) {
    return Violation(what + ": bad nodes");
  }
  if (!state_.node(from).live || !Contains(replicas_[block], from)) {
    return Violation(what + ": the source is not a live holder");
  }
  if (!state_.node(to).live) return Violation(what + ": the target is not live");
  const uint64_t key = block * static_cast<uint64_t>(nodes) + static_cast<uint64_t>(to);
  if (Contains(replicas_[block], to) || in_flight_.count(key)) return;  // already there or coming
  const double mb = sc_.data.block_mb;
  const Span span = net_->SpanOf(from, to);
  const double end = net_->Transfer(from, to, mb, static_cast<double>(now_));
  result_.all.prefetch_mb[static_cast<int>(span)] += mb;
  if (auto it = block_maps_.find(block); it != block_maps_.end() && !it->second.empty()) {
    const int type = wl_.jobs[static_cast<size_t>(it->second.front().first)].type;
    type_tally_[static_cast<size_t>(type)].prefetch_mb[static_cast<int>(span)] += mb;
  }
  ++result_.prefetches;
  in_flight_[key] = end;
  transfers_.push_back(Transfer{block, to});
  events_.Push(Ceil(end), EventKind::kPrefetchLanded, static_cast<int32_t>(transfers_.size() - 1));
}

// The copy is a replica now, for the DFS and for every active map of the block.
void SimHost::OnPrefetchLanded(int32_t id) {
  const Transfer t = transfers_[static_cast<size_t>(id)];
  in_flight_.erase(t.block * state_.nodes().size() + static_cast<size_t>(t.to));
  last_progress_ms_ = now_;
  if (Contains(replicas_[t.block], t.to)) return;
  replicas_[t.block].push_back(t.to);
  auto it = block_maps_.find(t.block);
  if (it == block_maps_.end()) return;
  for (const auto& [job, index] : it->second) {
    std::vector<NodeId>& r = state_.mutable_job(job).maps[static_cast<size_t>(index)].replicas;
    if (!Contains(r, t.to)) r.push_back(t.to);
  }
}

}  // namespace mr::sim
