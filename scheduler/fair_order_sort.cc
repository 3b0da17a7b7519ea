// FairOrder's Sort and its cache (job_order.h: FairOrder, point 4, and
// the OrderCache comment). Split from job_order.cc, which keeps the shares,
// the pools and Update.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <map>
#include <span>

#include "scheduler/job_order.h"

namespace mr::sched {
namespace {

// What SchedulingAlgorithms.FairShareComparator reads of a schedulable.
struct Fairness {
  int running = 0;
  int min_share = 0;  // min(minShare, demand)
  double weight = 1;
};

// < 0 when `a` goes first, > 0 when `b` does, 0 on a tie (the caller
// breaks it).
int CompareFair(const Fairness& a, const Fairness& b) {
  const bool a_needy = a.running < a.min_share;
  const bool b_needy = b.running < b.min_share;
  if (a_needy != b_needy) return a_needy ? -1 : 1;
  double x, y;
  if (a_needy) {
    x = static_cast<double>(a.running) / std::max(a.min_share, 1);
    y = static_cast<double>(b.running) / std::max(b.min_share, 1);
  } else {
    x = a.running / a.weight;
    y = b.running / b.weight;
  }
  return x < y ? -1 : (y < x ? 1 : 0);
}

int Running(const Job& job, bool for_maps) {
  return for_maps ? job.running_maps : job.running_reduces;
}

}  // namespace

void FairOrder::SortFresh(const ClusterState& state, bool for_maps,
                          std::vector<JobId>* jobs) const {
  struct Group {
    const std::string* name = nullptr;
    const PoolSpec* spec = nullptr;
    std::vector<JobId> jobs;
    Fairness fair;
    int demand = 0;
  };
  std::map<std::string, Group> by_name;  // name order: the pools' final tie-break
  for (JobId id : *jobs) {
    const Job& job = state.job(id);
    Group& g = by_name[PoolName(job)];
    g.jobs.push_back(id);
    g.fair.running += Running(job, for_maps);
    g.demand += Demand(state, id, for_maps);
  }
  std::vector<Group*> groups;
  for (auto& [name, g] : by_name) {
    g.name = &name;
    g.spec = &Spec(name);
    g.fair.weight = g.spec->weight;
    g.fair.min_share = std::min(for_maps ? g.spec->min_maps : g.spec->min_reduces, g.demand);
    groups.push_back(&g);
  }
  // Stable: pools tied on fairness keep name order (their start time is 0).
  std::stable_sort(groups.begin(), groups.end(), [](const Group* a, const Group* b) {
    return CompareFair(a->fair, b->fair) < 0;
  });

  jobs->clear();
  for (Group* g : groups) {
    if (g->spec->fifo) {
      std::sort(g->jobs.begin(), g->jobs.end(),
                [&](JobId a, JobId b) { return FifoOrder::Before(state.job(a), state.job(b)); });
    } else {
      std::sort(g->jobs.begin(), g->jobs.end(), [&](JobId a, JobId b) {
        const Job& x = state.job(a);
        const Job& y = state.job(b);
        // Jobs have min share 0, so none is needy: running / weight.
        const int c = CompareFair({Running(x, for_maps), 0, PriorityWeight(x.priority)},
                                  {Running(y, for_maps), 0, PriorityWeight(y.priority)});
        if (c != 0) return c < 0;
        if (x.submit_ms != y.submit_ms) return x.submit_ms < y.submit_ms;
        return a < b;
      });
    }
    jobs->insert(jobs->end(), g->jobs.begin(), g->jobs.end());
  }
}

void FairOrder::ResetCache(OrderCache& c) {
  c.state = nullptr;
  c.size = 0;
  c.input.clear();
  c.input_active = false;
  c.pools.clear();
  c.pool_index.clear();
  c.jobs.clear();
}

// The fast path (Sort's comment in job_order.h): when the jobs asked are
// those of the last Sort, or are state.active_jobs() now as they were then,
// a job not logged since can differ from its cached entry in nothing — not
// in membership (AddJob and FinishJob are logged), not in key (running,
// priority and submit time change only by a logged mutation), not in
// demand (a live demand is a function of the job; a snapshot one changes
// only when an Update re-reads it, and Updates re-read only logged jobs,
// so the log is read from the older of the last Sort and the snapshot it
// used). Reconcile re-reads the logged ones; everything else is kept.
void FairOrder::Sort(const ClusterState& state, bool for_maps, std::vector<JobId>* jobs) const {
  OrderCache& c = cache_[for_maps ? 1 : 0];
  if (&state != c.state) {
    ResetCache(c);
    c.state = &state;
  } else if (jobs->size() < c.size / 2) {
    // A small subset (Pandas' per-queue heads): sort it, keep the cache for
    // the full set.
    SortFresh(state, for_maps, jobs);
    return;
  }
  const uint64_t epoch = ++c.epoch;
  c.placed.clear();
  const bool same_input = *jobs == c.input;
  const bool is_active = *jobs == state.active_jobs();
  std::span<const JobId> changed;
  uint64_t since = c.log_seq;
  const ClusterState* snapshot = demand_.state();
  const bool demands_comparable =
      (snapshot == nullptr || snapshot == &state) && snapshot == c.demand_state;
  if (demand_.refreshes() != c.demand_refreshes) since = std::min(since, c.demand_seq);
  if (c.size > 0 && (same_input || (is_active && c.input_active)) && demands_comparable &&
      state.ChangedJobsSince(since, &changed)) {
    for (JobId id : changed) {
      if (id < 0) continue;
      const bool in_now =
          same_input ? id < static_cast<JobId>(c.jobs.size()) && c.jobs[static_cast<size_t>(id)].in
                     : std::binary_search(jobs->begin(), jobs->end(), id);  // ascending ids
      Reconcile(state, for_maps, c, id, in_now, epoch);
    }
    if (!same_input) c.input = *jobs;
  } else {
    FullPass(state, for_maps, *jobs, c, epoch);
    if (c.state == nullptr) {  // an id asked twice
      SortFresh(state, for_maps, jobs);
      return;
    }
  }
  c.input_active = is_active;
  c.log_seq = state.change_seq();
  c.demand_state = snapshot;
  c.demand_refreshes = demand_.refreshes();
  c.demand_seq = demand_.seq();
  PlaceAndOrder(for_maps, c, jobs);
}

bool FairOrder::InPoolBefore(const OrderCache& c, JobId a, JobId b) {
  const JobEntry& x = c.jobs[static_cast<size_t>(a)];
  const JobEntry& y = c.jobs[static_cast<size_t>(b)];
  if (x.pool != y.pool) return x.pool < y.pool;
  if (c.pools[static_cast<size_t>(x.pool)].spec.fifo) {
    if (x.priority != y.priority) return x.priority > y.priority;
  } else {
    // Jobs have min share 0, so none is needy: running / weight.
    const int cmp = CompareFair({x.running, 0, PriorityWeight(x.priority)},
                                {y.running, 0, PriorityWeight(y.priority)});
    if (cmp != 0) return cmp < 0;
  }
  if (x.submit_ms != y.submit_ms) return x.submit_ms < y.submit_ms;
  return a < b;
}

void FairOrder::Unlist(OrderCache& c, JobId id) {
  PoolEntry& p = c.pools[static_cast<size_t>(c.jobs[static_cast<size_t>(id)].pool)];
  // Found by the key it was placed with (still in its entry).
  auto before = [&c](JobId a, JobId b) { return InPoolBefore(c, a, b); };
  auto at = std::lower_bound(p.jobs.begin(), p.jobs.end(), id, before);
  if (at == p.jobs.end() || *at != id) {
    std::cerr << "FairOrder: job " << id << " is not where its cached key puts it"
              << " (did the host change its pool?)\n";
    std::abort();
  }
  p.jobs.erase(at);
}

int32_t FairOrder::CachePool(OrderCache& c, const Job& job) const {
  const std::string& name = PoolName(job);
  auto [it, added] = c.pool_index.try_emplace(name, static_cast<int32_t>(c.pools.size()));
  if (added) {
    c.pools.emplace_back();
    c.pools.back().spec = Spec(name);
    int rank = 0;
    for (const auto& [n, i] : c.pool_index) c.pools[static_cast<size_t>(i)].rank = rank++;
  }
  return it->second;
}

void FairOrder::Reconcile(const ClusterState& state, bool for_maps, OrderCache& c, JobId id,
                          bool in_now, uint64_t epoch) const {
  if (c.jobs.size() <= static_cast<size_t>(id)) c.jobs.resize(static_cast<size_t>(id) + 1);
  JobEntry& e = c.jobs[static_cast<size_t>(id)];
  if (e.epoch == epoch) return;  // logged more than once
  e.epoch = epoch;
  if (!e.in && !in_now) return;
  if (e.in && !in_now) {  // left: out of its list and its pool's totals
    Unlist(c, id);
    PoolEntry& p = c.pools[static_cast<size_t>(e.pool)];
    p.running -= e.running;
    p.demand -= e.demand;
    e.in = false;
    return;
  }
  const Job& job = state.job(id);
  const int running = Running(job, for_maps);
  const int demand = Demand(state, id, for_maps);
  if (!e.in) {  // new: PlaceAndOrder lists it
    if (e.pool < 0) e.pool = CachePool(c, job);
    e.moved = false;
    c.placed.push_back(id);
  } else {
    PoolEntry& p = c.pools[static_cast<size_t>(e.pool)];
    p.running -= e.running;
    p.demand -= e.demand;
    if (job.priority != e.priority || job.submit_ms != e.submit_ms ||
        (!p.spec.fifo && running != e.running)) {
      Unlist(c, id);  // PlaceAndOrder puts it back by the new key
      e.moved = true;
      c.placed.push_back(id);
    }
  }
  PoolEntry& p = c.pools[static_cast<size_t>(e.pool)];
  p.running += running;
  p.demand += demand;
  e.running = running;
  e.priority = job.priority;
  e.submit_ms = job.submit_ms;
  e.demand = demand;
}

void FairOrder::FullPass(const ClusterState& state, bool for_maps, const std::vector<JobId>& input,
                         OrderCache& c, uint64_t epoch) const {
  const std::vector<JobId>* jobs = &input;
  c.input = input;
  size_t max_id = 0;
  for (JobId id : *jobs) max_id = std::max(max_id, static_cast<size_t>(id));
  if (c.jobs.size() <= max_id) c.jobs.resize(max_id + 1);
  for (PoolEntry& p : c.pools) p.running = p.demand = 0, p.kept = p.moved = 0;
  for (JobId id : *jobs) {
    JobEntry& e = c.jobs[static_cast<size_t>(id)];
    if (e.epoch == epoch) {
      // An id asked twice: not a set; the caller sorts plainly.
      ResetCache(c);
      return;
    }
    e.epoch = epoch;
    const Job& job = state.job(id);
    const int running = Running(job, for_maps);
    if (!e.in) {
      if (e.pool < 0) e.pool = CachePool(c, job);
      e.moved = false;
      c.placed.push_back(id);
    } else {
      PoolEntry& p = c.pools[static_cast<size_t>(e.pool)];
      ++p.kept;
      if (job.priority != e.priority || job.submit_ms != e.submit_ms ||
          (!p.spec.fifo && running != e.running)) {
        e.moved = true;
        ++p.moved;
        c.placed.push_back(id);
      }
    }
    e.running = running;
    e.priority = job.priority;
    e.submit_ms = job.submit_ms;
    e.demand = Demand(state, id, for_maps);
    PoolEntry& p = c.pools[static_cast<size_t>(e.pool)];
    p.running += running;
    p.demand += e.demand;
  }
  // Drop the jobs that left and the ones to re-place.
  for (PoolEntry& p : c.pools) {
    if (p.kept == p.jobs.size() && p.moved == 0) continue;
    std::erase_if(p.jobs, [&](JobId id) {
      JobEntry& e = c.jobs[static_cast<size_t>(id)];
      if (e.epoch != epoch) {
        e.in = false;
        return true;
      }
      return e.moved;
    });
  }
}

void FairOrder::PlaceAndOrder(bool for_maps, OrderCache& c, std::vector<JobId>* jobs) const {
  // Place the moved and new jobs: by pool, then the pool's job order.
  auto before = [&c](JobId a, JobId b) { return InPoolBefore(c, a, b); };
  std::sort(c.placed.begin(), c.placed.end(), before);
  for (size_t i = 0; i < c.placed.size();) {
    const int32_t pool = c.jobs[static_cast<size_t>(c.placed[i])].pool;
    size_t end = i;
    while (end < c.placed.size() && c.jobs[static_cast<size_t>(c.placed[end])].pool == pool) ++end;
    std::vector<JobId>& list = c.pools[static_cast<size_t>(pool)].jobs;
    if (end - i <= 4) {
      for (size_t k = i; k < end; ++k) {
        list.insert(std::upper_bound(list.begin(), list.end(), c.placed[k], before), c.placed[k]);
      }
    } else {
      c.merged.clear();
      c.merged.reserve(list.size() + (end - i));
      std::merge(list.begin(), list.end(), c.placed.begin() + static_cast<ptrdiff_t>(i),
                 c.placed.begin() + static_cast<ptrdiff_t>(end), std::back_inserter(c.merged),
                 before);
      list.swap(c.merged);
    }
    for (size_t k = i; k < end; ++k) {
      JobEntry& e = c.jobs[static_cast<size_t>(c.placed[k])];
      e.in = true;
      e.moved = false;
    }
    i = end;
  }
  // Pools: by fairness from this Sort's totals; ties on name.
  c.pool_order.clear();
  for (size_t i = 0; i < c.pools.size(); ++i) {
    if (!c.pools[i].jobs.empty()) c.pool_order.push_back(static_cast<int32_t>(i));
  }
  auto fairness = [&](const PoolEntry& p) {
    return Fairness{p.running, std::min(for_maps ? p.spec.min_maps : p.spec.min_reduces, p.demand),
                    p.spec.weight};
  };
  std::sort(c.pool_order.begin(), c.pool_order.end(), [&](int32_t a, int32_t b) {
    const PoolEntry& x = c.pools[static_cast<size_t>(a)];
    const PoolEntry& y = c.pools[static_cast<size_t>(b)];
    const int cmp = CompareFair(fairness(x), fairness(y));
    if (cmp != 0) return cmp < 0;
    return x.rank < y.rank;
  });
  c.size = jobs->size();
  jobs->clear();
  for (int32_t i : c.pool_order) {
    const std::vector<JobId>& list = c.pools[static_cast<size_t>(i)].jobs;
    jobs->insert(jobs->end(), list.begin(), list.end());
  }
}

}  // namespace mr::sched
