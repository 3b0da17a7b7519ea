#include "scheduler/delay_scheduling.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>

namespace mr::sched {

const char* DelayLevelName(DelayLevel level) {
  switch (level) {
    case DelayLevel::kNode:
      return "NODE";
    case DelayLevel::kRack:
      return "RACK";
    case DelayLevel::kAny:
      return "ANY";
  }
  return "unknown";
}

DelayLevel DelayLevelOf(Locality locality) {
  switch (locality) {
    case Locality::kNode:
      return DelayLevel::kNode;
    case Locality::kRack:
    case Locality::kDatacenter:
      return DelayLevel::kRack;
    case Locality::kOffDatacenter:
      break;
  }
  return DelayLevel::kAny;
}

Locality SearchCap(DelayLevel level) {
  switch (level) {
    case DelayLevel::kNode:
      return Locality::kNode;
    case DelayLevel::kRack:
      return Locality::kDatacenter;
    case DelayLevel::kAny:
      break;
  }
  return Locality::kOffDatacenter;
}

TimeMs AutoLocalityDelay(TimeMs heartbeat_ms) {
  constexpr TimeMs kMaxAutoDelayMs = 15000;  // MAX_AUTOCOMPUTED_LOCALITY_DELAY
  return std::min(kMaxAutoDelayMs, static_cast<TimeMs>(1.5 * static_cast<double>(heartbeat_ms)));
}

// ---- LocalityDelay ----

const LocalityDelay::JobWait& LocalityDelay::Get(JobId job) const {
  if (job < 0 || static_cast<size_t>(job) >= jobs_.size() ||
      !jobs_[static_cast<size_t>(job)].known) {
    std::cerr << "LocalityDelay: job " << job << " was never added (a policy bug)\n";
    std::abort();
  }
  return jobs_[static_cast<size_t>(job)];
}

LocalityDelay::JobWait& LocalityDelay::Mut(JobId job) {
  Get(job);  // checks
  return jobs_[static_cast<size_t>(job)];
}

void LocalityDelay::AddJob(JobId job) {
  if (static_cast<size_t>(job) >= jobs_.size()) jobs_.resize(static_cast<size_t>(job) + 1);
  jobs_[static_cast<size_t>(job)] = JobWait{.known = true};
}

void LocalityDelay::RemoveJob(JobId job) {
  if (job >= 0 && static_cast<size_t>(job) < jobs_.size()) jobs_[static_cast<size_t>(job)] = {};
}

void LocalityDelay::BeginHeartbeat(TimeMs now) {
  const TimeMs since = had_heartbeat_ ? now - last_heartbeat_ms_ : 0;
  had_heartbeat_ = true;
  last_heartbeat_ms_ = now;
  for (JobId id : skipped_) {
    JobWait& w = jobs_[static_cast<size_t>(id)];
    if (!w.known || !w.skipped) continue;  // removed since
    w.waited += since;
    w.skipped = false;
  }
  skipped_.clear();
}

DelayLevel LocalityDelay::Allowed(JobId job, bool unlocated_pending) const {
  const JobWait& w = Get(job);
  if (unlocated_pending) return DelayLevel::kAny;
  switch (w.last) {
    case DelayLevel::kNode:
      if (w.waited >= node_delay_ms_ + rack_delay_ms_) return DelayLevel::kAny;
      if (w.waited >= node_delay_ms_) return DelayLevel::kRack;
      return DelayLevel::kNode;
    case DelayLevel::kRack:
      return w.waited >= rack_delay_ms_ ? DelayLevel::kAny : DelayLevel::kRack;
    case DelayLevel::kAny:
      break;
  }
  return DelayLevel::kAny;
}

void LocalityDelay::Visit(JobId job) {
  JobWait& w = Mut(job);
  if (w.visited) return;
  w.visited = true;
  visited_.push_back(job);
}

void LocalityDelay::Launched(JobId job, DelayLevel level) {
  JobWait& w = Mut(job);
  w.last = level;
  w.waited = 0;
  w.launched = true;
}

void LocalityDelay::EndHeartbeat() {
  for (JobId id : visited_) {
    JobWait& w = jobs_[static_cast<size_t>(id)];
    if (!w.known) continue;
    if (!w.launched) {
      w.skipped = true;
      skipped_.push_back(id);
    }
    w.visited = w.launched = false;
  }
  visited_.clear();
}

// ---- DelayAssigner ----

DelayAssigner::DelayAssigner(const DelayOptions& options, std::unique_ptr<JobOrder> order)
    : options_(options),
      order_(std::move(order)),
      delay_(options.node_delay_ms, options.rack_delay_ms) {}

void DelayAssigner::NoteUnlocated(const ClusterState& state, JobId job) {
  if (static_cast<size_t>(job) >= unlocated_.size())
    unlocated_.resize(static_cast<size_t>(job) + 1);
  const std::vector<MapTask>& maps = state.job(job).maps;
  unlocated_[static_cast<size_t>(job)] =
      std::any_of(maps.begin(), maps.end(), [](const MapTask& m) { return m.replicas.empty(); });
}

// Hadoop's `job.nonLocalMaps.size() > 0`. Scans only jobs that have such
// maps at all (replicas are only ever added while a job runs).
bool DelayAssigner::UnlocatedPending(const ClusterState& state, JobId job) const {
  if (!unlocated_[static_cast<size_t>(job)]) return false;
  const std::vector<MapTask>& maps = state.job(job).maps;
  return std::any_of(maps.begin(), maps.end(), [](const MapTask& m) {
    return m.replicas.empty() && m.state == TaskState::kPending;
  });
}

void DelayAssigner::Update(const ClusterState& state, TimeMs now) {
  order_->Update(state, now);
  demand_.Refresh(state);  // O(jobs changed since the last refresh)
  runnable_maps_ = demand_.total(/*for_maps=*/true);
  runnable_reduces_ = demand_.total(/*for_maps=*/false);
  updated_ = true;
  last_update_ms_ = now;
}

void DelayAssigner::OnJobAdded(const ClusterState& state, JobId job, TimeMs now) {
  tasks_.AddJob(state, job);
  delay_.AddJob(job);
  NoteUnlocated(state, job);
  Update(state, now);
}

void DelayAssigner::OnJobFinished(const ClusterState& state, JobId job, TimeMs now) {
  tasks_.RemoveJob(job);
  delay_.RemoveJob(job);
  Update(state, now);
}

void DelayAssigner::OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map) {
  tasks_.TaskPendingAgain(state, job, index, is_map);
}

void DelayAssigner::OnNodeLost(const ClusterState& state) {
  tasks_.Refresh(state);
  for (JobId id : state.active_jobs()) NoteUnlocated(state, id);
}

bool DelayAssigner::AssignOne(const ClusterState& state, NodeId node, bool map,
                              Launcher& launcher) {
  if (!map) tasks_.SyncReduceReady(state);
  sorted_ = state.active_jobs();
  order_->Sort(state, map, &sorted_);
  for (JobId id : sorted_) {
    if (!map) {
      // Most jobs have no reduce to give: skip them without touching the job.
      if (!tasks_.MayGiveReduce(id)) continue;
      if (int32_t i = tasks_.ObtainReduce(state, id, node); i >= 0) {
        launcher.LaunchReduce(id, i);
        return true;
      }
      continue;
    }
    delay_.Visit(id);
    const Job& job = state.job(id);
    if (job.pending_maps() == 0) continue;
    const DelayLevel allowed = delay_.Allowed(id, UnlocatedPending(state, id));
    if (int32_t i = tasks_.ObtainMap(state, id, node, SearchCap(allowed), options_.topology);
        i >= 0) {
      const Locality actual = state.LocalityOf(node, job.maps[static_cast<size_t>(i)].replicas);
      launcher.LaunchMap(id, i);
      // Blind: one rack, so whatever is not on the node is rack-local.
      const bool blind = options_.topology == Topology::kBlind;
      delay_.Launched(id, blind && actual != Locality::kNode ? DelayLevel::kRack
                                                             : DelayLevelOf(actual));
      return true;
    }
  }
  return false;
}

namespace {

// CapBasedLoadManager.canAssign{Map,Reduce} with load.max.diff 0: the node
// runs fewer than ceil(slots × min(1, runnable / cluster slots)).
bool LoadAllows(int node_running, int node_slots, int runnable, int cluster_slots) {
  const double load =
      cluster_slots > 0 ? static_cast<double>(runnable) / static_cast<double>(cluster_slots) : 1.0;
  const double cap = std::ceil(static_cast<double>(node_slots) * std::min(1.0, load));
  return node_running < cap;
}

}  // namespace

void DelayAssigner::Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) {
  const Node& n = state.node(hb.node);
  if (!n.live) return;
  if (!updated_ || hb.now - last_update_ms_ >= options_.update_interval_ms) Update(state, hb.now);
  delay_.BeginHeartbeat(hb.now);

  int running_maps = state.running_maps(), running_reduces = state.running_reduces();
  const int map_slots = state.total_map_slots(), reduce_slots = state.total_reduce_slots();
  const int map_cap = options_.assign_multiple ? n.free_map_slots() : 1;
  const int reduce_cap = options_.assign_multiple ? n.free_reduce_slots() : 1;
  int maps = 0, reduces = 0;
  bool map_rejected = false, reduce_rejected = false;
  while (true) {
    // n's counts include this heartbeat's launches (Hadoop: the tracker's
    // counts plus the tasks assigned so far).
    if (!map_rejected) {
      map_rejected = maps == map_cap || n.free_map_slots() <= 0 || running_maps == runnable_maps_ ||
                     !LoadAllows(n.running_maps, n.map_slots, runnable_maps_, map_slots);
    }
    if (!reduce_rejected) {
      reduce_rejected =
          reduces == reduce_cap || n.free_reduce_slots() <= 0 ||
          running_reduces == runnable_reduces_ ||
          !LoadAllows(n.running_reduces, n.reduce_slots, runnable_reduces_, reduce_slots);
    }
    if ((map_rejected && reduce_rejected) || (!options_.assign_multiple && maps + reduces > 0)) {
      break;
    }
    const bool map =
        map_rejected ? false : (reduce_rejected || n.running_maps <= n.running_reduces);
    if (!AssignOne(state, hb.node, map, launcher)) {
      (map ? map_rejected : reduce_rejected) = true;
    } else if (map) {
      ++maps, ++running_maps;
    } else {
      ++reduces, ++running_reduces;
    }
  }
  delay_.EndHeartbeat();
}

}  // namespace mr::sched
