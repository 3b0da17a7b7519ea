#include "scheduler/job_tasks.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <set>
#include <span>

namespace mr::sched {

// Sorted sets give the lowest-index tie-break for free and make re-adding a
// task that is still listed a no-op.
struct JobTaskIndex::Lists {
  std::vector<std::set<int32_t>> by_node;  // by NodeId
  std::vector<std::set<int32_t>> by_rack;  // by rack id
  std::vector<std::set<int32_t>> by_dc;    // by datacenter
  std::set<int32_t> no_location;
  std::vector<int32_t> failed_maps;  // unordered; BestFailed picks
  std::set<int32_t> reduces;
  std::vector<int32_t> failed_reduces;
  // By map index: 1 + its replica count (at most 254) while the map is in
  // every list above that Index puts it in; 0 once First dropped it from
  // one. Refresh re-indexes only the pending maps this does not vouch for
  // (the ones a launch took out and a node loss made pending again, or
  // whose replicas grew: hosts only ever add replicas, mr-sim's prefetches):
  // a full re-index after a node loss, 100,000 maps × 3 replicas × 3 lists,
  // held the master's thread for 50-100 ms (issue 29).
  std::vector<uint8_t> listed;
};

namespace {

// Hadoop's findTaskFromList test for "failed on this host": the node is
// skipped unless the task failed on as many nodes as can run it (live and
// not decommissioning: counting those, a reduce that failed on the one
// in-service worker of a cluster whose other worker drained waited forever).
class FailedHere {
 public:
  FailedHere(const ClusterState& state, NodeId node) : state_(state), node_(node) {}
  bool operator()(const std::vector<NodeId>& failed_on) {
    if (std::find(failed_on.begin(), failed_on.end(), node_) == failed_on.end()) return false;
    if (live_ < 0) {
      live_ = static_cast<int>(std::count_if(state_.nodes().begin(), state_.nodes().end(),
                                             [](const Node& n) { return n.live && !n.draining; }));
    }
    return static_cast<int>(failed_on.size()) < live_;
  }

 private:
  const ClusterState& state_;
  NodeId node_;
  int live_ = -1;  // computed on first need: failures are rare
};

uint8_t ListedMark(const MapTask& m) {
  return static_cast<uint8_t>(1 + std::min<size_t>(m.replicas.size(), 254));
}

// The first eligible entry of a sorted list, dropping entries that are no
// longer pending on the way (and their Lists::listed mark, for maps).
template <typename Task>
int32_t First(std::set<int32_t>& list, const std::vector<Task>& tasks, FailedHere& failed_here,
              std::vector<uint8_t>* listed = nullptr) {
  for (auto it = list.begin(); it != list.end();) {
    const Task& t = tasks[static_cast<size_t>(*it)];
    if (t.state != TaskState::kPending) {
      if (listed != nullptr) (*listed)[static_cast<size_t>(*it)] = 0;
      it = list.erase(it);
    } else if (failed_here(t.failed_on)) {
      ++it;
    } else {
      return *it;
    }
  }
  return -1;
}

// The failed list's best eligible entry: most failures, then lowest index
// (Hadoop's failComparator). Drops entries no longer pending.
template <typename Task>
int32_t BestFailed(std::vector<int32_t>& list, const std::vector<Task>& tasks,
                   FailedHere& failed_here) {
  std::erase_if(
      list, [&](int32_t i) { return tasks[static_cast<size_t>(i)].state != TaskState::kPending; });
  int32_t best = -1;
  size_t best_failures = 0;
  for (int32_t i : list) {
    const Task& t = tasks[static_cast<size_t>(i)];
    if (failed_here(t.failed_on)) continue;
    if (best < 0 || t.failed_on.size() > best_failures ||
        (t.failed_on.size() == best_failures && i < best)) {
      best = i;
      best_failures = t.failed_on.size();
    }
  }
  return best;
}

std::set<int32_t>* At(std::vector<std::set<int32_t>>& lists, int32_t key) {
  if (key < 0 || static_cast<size_t>(key) >= lists.size()) return nullptr;
  return &lists[static_cast<size_t>(key)];
}

void AddFailed(std::vector<int32_t>& list, int32_t index) {
  if (std::find(list.begin(), list.end(), index) == list.end()) list.push_back(index);
}

}  // namespace

bool ParseTopology(const std::string& text, Topology* out) {
  if (text == "rack-as-datacenter") {
    *out = Topology::kRackAsDatacenter;
  } else if (text == "blind") {
    *out = Topology::kBlind;
  } else {
    return false;
  }
  return true;
}

std::string TopologyError(const std::string& text) {
  return "topology must be rack-as-datacenter or blind, got '" + text + "'";
}

JobTaskIndex::JobTaskIndex() = default;
JobTaskIndex::~JobTaskIndex() = default;

JobTaskIndex::Lists& JobTaskIndex::Get(JobId job, const char* caller) {
  if (job < 0 || static_cast<size_t>(job) >= jobs_.size() || !jobs_[static_cast<size_t>(job)]) {
    std::cerr << "JobTaskIndex::" << caller << ": job " << job
              << " was never added (the policy must call AddJob from OnJobAdded)\n";
    std::abort();
  }
  return *jobs_[static_cast<size_t>(job)];
}

bool JobTaskIndex::Contains(JobId job) const {
  return job >= 0 && static_cast<size_t>(job) < jobs_.size() && jobs_[static_cast<size_t>(job)];
}

// Lists a pending map under every level its replicas reach.
void JobTaskIndex::Index(const ClusterState& state, JobId job, Lists& lists, int32_t index) {
  const MapTask& m = state.job(job).maps[static_cast<size_t>(index)];
  if (m.state != TaskState::kPending) return;
  if (!m.failed_on.empty()) AddFailed(lists.failed_maps, index);
  const size_t i = static_cast<size_t>(index);
  if (lists.listed.size() <= i) lists.listed.resize(i + 1, 0);
  lists.listed[i] = ListedMark(m);
  if (m.replicas.empty()) {
    lists.no_location.insert(index);
    return;
  }
  for (NodeId r : m.replicas) {
    const Node& n = state.node(r);
    auto grow = [](std::vector<std::set<int32_t>>& v, int32_t key) -> std::set<int32_t>& {
      if (static_cast<size_t>(key) >= v.size()) v.resize(static_cast<size_t>(key) + 1);
      return v[static_cast<size_t>(key)];
    };
    grow(lists.by_node, r).insert(index);
    if (n.rack >= 0) grow(lists.by_rack, n.rack).insert(index);
    grow(lists.by_dc, n.datacenter).insert(index);
  }
}

void JobTaskIndex::AddJob(const ClusterState& state, JobId job) {
  if (static_cast<size_t>(job) >= jobs_.size()) jobs_.resize(static_cast<size_t>(job) + 1);
  auto lists = std::make_unique<Lists>();
  const Job& j = state.job(job);
  for (const MapTask& m : j.maps) Index(state, job, *lists, m.index);
  for (const ReduceTask& r : j.reduces) {
    if (r.state != TaskState::kPending) continue;
    lists->reduces.insert(r.index);
    if (!r.failed_on.empty()) AddFailed(lists->failed_reduces, r.index);
  }
  jobs_[static_cast<size_t>(job)] = std::move(lists);
}

void JobTaskIndex::RemoveJob(JobId job) {
  if (Contains(job)) jobs_[static_cast<size_t>(job)].reset();
}

void JobTaskIndex::TaskPendingAgain(const ClusterState& state, JobId job, int32_t index,
                                    bool is_map) {
  Lists& lists = Get(job, "TaskPendingAgain");
  if (is_map) {
    Index(state, job, lists, index);
    return;
  }
  const ReduceTask& r = state.job(job).reduces[static_cast<size_t>(index)];
  if (r.state != TaskState::kPending) return;
  lists.reduces.insert(index);
  if (!r.failed_on.empty()) AddFailed(lists.failed_reduces, index);
}

void JobTaskIndex::Refresh(const ClusterState& state) {
  for (size_t j = 0; j < jobs_.size(); ++j) {
    if (!jobs_[j]) continue;
    const JobId job = static_cast<JobId>(j);
    Lists& lists = *jobs_[j];
    for (const MapTask& m : state.job(job).maps) {
      const size_t i = static_cast<size_t>(m.index);
      if (m.state == TaskState::kPending && i < lists.listed.size() && lists.listed[i] == ListedMark(m)) {
        if (!m.failed_on.empty()) AddFailed(lists.failed_maps, m.index);  // all Index would add
        continue;
      }
      Index(state, job, lists, m.index);
    }
    for (const ReduceTask& r : state.job(job).reduces) {
      if (r.state == TaskState::kPending) TaskPendingAgain(state, job, r.index, false);
    }
  }
}

// cap: -1 non-local only, else the deepest Locality level searched around
// the node (kOffDatacenter = no cap). `blind`: one rack holds every node
// (Topology::kBlind), so after the node comes every located map.
int32_t JobTaskIndex::Obtain(const ClusterState& state, JobId job, NodeId node, int cap,
                             bool blind) {
  Lists& lists = Get(job, "ObtainMap");
  const std::vector<MapTask>& maps = state.job(job).maps;
  const Node& n = state.node(node);
  FailedHere failed_here(state, node);

  // 0. Failed maps, ignoring locality.
  if (int32_t i = BestFailed(lists.failed_maps, maps, failed_here); i >= 0) return i;

  // 1. Bottom up around the node, up to the cap.
  if (cap >= 0) {
    if (auto* l = At(lists.by_node, node)) {
      if (int32_t i = First(*l, maps, failed_here, &lists.listed); i >= 0) return i;
    }
    if (cap == static_cast<int>(Locality::kNode)) return -1;
    if (blind) {  // the one rack: the lowest index over every datacenter
      int32_t best = -1;
      for (std::set<int32_t>& l : lists.by_dc) {
        int32_t i = First(l, maps, failed_here, &lists.listed);
        if (i >= 0 && (best < 0 || i < best)) best = i;
      }
      if (best >= 0 || cap != static_cast<int>(Locality::kOffDatacenter)) return best;
      return First(lists.no_location, maps, failed_here, &lists.listed);
    }
    if (n.rack >= 0) {
      if (auto* l = At(lists.by_rack, n.rack)) {
        if (int32_t i = First(*l, maps, failed_here, &lists.listed); i >= 0) return i;
      }
    }
    if (cap == static_cast<int>(Locality::kRack)) return -1;
    if (auto* l = At(lists.by_dc, n.datacenter)) {
      if (int32_t i = First(*l, maps, failed_here, &lists.listed); i >= 0) return i;
    }
    if (cap == static_cast<int>(Locality::kDatacenter)) return -1;
  }

  // 2. Other datacenters: the lowest index over all of them.
  int32_t best = -1;
  for (size_t dc = 0; dc < lists.by_dc.size(); ++dc) {
    if (static_cast<int32_t>(dc) == n.datacenter) continue;
    int32_t i = First(lists.by_dc[dc], maps, failed_here, &lists.listed);
    if (i >= 0 && (best < 0 || i < best)) best = i;
  }
  if (best >= 0) return best;

  // 3. Maps with no location.
  return First(lists.no_location, maps, failed_here, &lists.listed);
}

int32_t JobTaskIndex::ObtainMap(const ClusterState& state, JobId job, NodeId node,
                                Locality max_level, Topology topology) {
  return Obtain(state, job, node, static_cast<int>(max_level), topology == Topology::kBlind);
}

int32_t JobTaskIndex::ObtainNonLocalMap(const ClusterState& state, JobId job, NodeId node) {
  return Obtain(state, job, node, -1, false);
}

int32_t JobTaskIndex::ObtainReduce(const ClusterState& state, JobId job, NodeId node) {
  Lists& lists = Get(job, "ObtainReduce");
  const Job& j = state.job(job);
  if (!j.reduces_may_start()) return -1;
  FailedHere failed_here(state, node);
  if (int32_t i = BestFailed(lists.failed_reduces, j.reduces, failed_here); i >= 0) return i;
  return First(lists.reduces, j.reduces, failed_here);
}

namespace {

bool ReduceReady(const Job& job) {
  return !job.done && job.pending_reduces() > 0 && job.reduces_may_start();
}

}  // namespace

void JobTaskIndex::SyncReduceReady(const ClusterState& state) {
  auto mark = [&](JobId id) {
    const size_t j = static_cast<size_t>(id);
    if (j >= reduce_ready_.size()) reduce_ready_.resize(j + 1, 0);
    reduce_ready_[j] = ReduceReady(state.job(id));
  };
  std::span<const JobId> changed;
  if (state.ChangedJobsSince(reduce_ready_seq_, &changed)) {
    for (JobId id : changed) mark(id);
  } else {  // the log moved on: read every active job
    std::fill(reduce_ready_.begin(), reduce_ready_.end(), 0);
    for (JobId id : state.active_jobs()) mark(id);
  }
  reduce_ready_seq_ = state.change_seq();
}

}  // namespace mr::sched
