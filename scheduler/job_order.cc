#include "scheduler/job_order.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <set>
#include <span>

#include "scheduler/spec_text.h"

namespace mr::sched {

// ---- FifoOrder ----

bool FifoOrder::Before(const Job& a, const Job& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.submit_ms != b.submit_ms) return a.submit_ms < b.submit_ms;
  return a.id < b.id;
}

void FifoOrder::Sort(const ClusterState& state, bool, std::vector<JobId>* jobs) const {
  auto before = [&](JobId a, JobId b) { return Before(state.job(a), state.job(b)); };
  if (&state == cached_state_ && *jobs == cached_input_) {
    *jobs = cached_order_;  // same set, same keys: same order
    return;
  }
  if (&state == cached_state_ && jobs->size() < cached_order_.size() / 2) {
    // A small subset (Pandas' per-queue heads): sort it, keep the cache for
    // the full set.
    std::sort(jobs->begin(), jobs->end(), before);
    return;
  }
  if (&state != cached_state_) {
    cached_order_.clear();
    cached_state_ = &state;
  }
  cached_input_ = *jobs;
  // Marks: 1 = in the cached order, 2 = in the cached order and still asked.
  size_t max_id = 0;
  for (JobId id : *jobs) max_id = std::max(max_id, static_cast<size_t>(id));
  for (JobId id : cached_order_) max_id = std::max(max_id, static_cast<size_t>(id));
  if (mark_.size() <= max_id) mark_.resize(max_id + 1, 0);
  for (JobId id : cached_order_) mark_[static_cast<size_t>(id)] = 1;
  added_.clear();
  bool repeated = false;
  for (JobId id : *jobs) {
    uint8_t& m = mark_[static_cast<size_t>(id)];
    if (m == 1) {
      m = 2;
    } else if (m == 0) {
      added_.push_back(id);
      m = 3;
    } else {
      repeated = true;  // an id asked twice: not a set, sort plainly
    }
  }
  std::erase_if(cached_order_, [&](JobId id) {
    uint8_t& m = mark_[static_cast<size_t>(id)];
    const bool drop = m != 2;
    m = 0;
    return drop;
  });
  for (JobId id : *jobs) mark_[static_cast<size_t>(id)] = 0;
  if (repeated) {
    std::sort(jobs->begin(), jobs->end(), before);
    cached_state_ = nullptr;
    cached_input_.clear();
    cached_order_.clear();
    return;
  }
  std::sort(added_.begin(), added_.end(), before);
  merged_.clear();
  merged_.reserve(cached_order_.size() + added_.size());
  std::merge(cached_order_.begin(), cached_order_.end(), added_.begin(), added_.end(),
             std::back_inserter(merged_), before);
  cached_order_.swap(merged_);
  *jobs = cached_order_;
}

// ---- Fair shares ----

namespace {

double Share(const ShareInput& in, double ratio) {
  return std::min(std::max(in.weight * ratio, in.min_share), in.demand);
}

double SlotsUsed(const std::vector<ShareInput>& inputs, double ratio) {
  double used = 0;
  for (const ShareInput& in : inputs) used += Share(in, ratio);
  return used;
}

constexpr int kShareIterations = 25;  // COMPUTE_FAIR_SHARES_ITERATIONS

}  // namespace

std::vector<double> ComputeFairShares(const std::vector<ShareInput>& inputs, double total_slots) {
  double total_demand = 0;
  for (const ShareInput& in : inputs) total_demand += in.demand;
  const double cap = std::min(total_demand, total_slots);
  double right = 1.0;
  // The bound keeps a zero weight (which Hadoop would loop on) finite.
  while (SlotsUsed(inputs, right) < cap && right < 1e300) right *= 2.0;
  double left = 0;
  for (int i = 0; i < kShareIterations; ++i) {
    const double mid = (left + right) / 2.0;
    if (SlotsUsed(inputs, mid) < cap) {
      left = mid;
    } else {
      right = mid;
    }
  }
  std::vector<double> shares;
  shares.reserve(inputs.size());
  for (const ShareInput& in : inputs) shares.push_back(Share(in, right));
  return shares;
}

int JobDemand(const Job& job, bool for_maps) {
  if (job.done) return 0;
  if (for_maps) return static_cast<int>(job.maps.size()) - job.finished_maps;
  if (!job.reduces_may_start()) return 0;
  return static_cast<int>(job.reduces.size()) - job.finished_reduces;
}

double PriorityWeight(int priority) { return std::ldexp(1.0, std::clamp(priority, -2, 2)); }

// ---- Pool specs ----

Result<std::vector<PoolSpec>> ParsePools(const std::string& spec) {
  std::vector<PoolSpec> pools;
  if (TrimSpaces(spec).empty()) return pools;
  std::set<std::string> names;
  for (const std::string& entry : SplitTrimmed(spec, ',')) {
    const std::vector<std::string> f = SplitTrimmed(entry, ':');
    auto bad = [&](const std::string& why) {
      return Status::InvalidArgument(
          "pools: entry '" + entry + "': " + why +
          " (format name[:weight[:min_maps[:min_reduces[:fair|fifo]]]])");
    };
    if (f.size() > 5) return bad("too many fields");
    PoolSpec p;
    p.name = f[0];
    if (p.name.empty()) return bad("empty pool name");
    if (!names.insert(p.name).second) return bad("pool named twice");
    if (f.size() > 1 &&
        (!ParseNumber(f[1], &p.weight) || !(p.weight > 0) || std::isinf(p.weight))) {
      return bad("weight must be a number > 0");
    }
    if (f.size() > 2 && (!ParseNumber(f[2], &p.min_maps) || p.min_maps < 0)) {
      return bad("min_maps must be an integer >= 0");
    }
    if (f.size() > 3 && (!ParseNumber(f[3], &p.min_reduces) || p.min_reduces < 0)) {
      return bad("min_reduces must be an integer >= 0");
    }
    if (f.size() > 4) {
      if (f[4] != "fair" && f[4] != "fifo") return bad("mode must be fair or fifo");
      p.fifo = f[4] == "fifo";
    }
    pools.push_back(p);
  }
  return pools;
}

// ---- FairOrder ----

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

FairOrder::FairOrder(std::vector<PoolSpec> pools) {
  for (PoolSpec& p : pools) specs_[p.name] = std::move(p);
}

const std::string& FairOrder::PoolName(const Job& job) {
  static const std::string kDefault = "default";
  return job.pool.empty() ? kDefault : job.pool;
}

const PoolSpec& FairOrder::Spec(const std::string& pool) const {
  auto it = specs_.find(pool);
  return it == specs_.end() ? default_spec_ : it->second;
}

int FairOrder::Demand(const ClusterState& state, JobId job, bool for_maps) const {
  const size_t j = static_cast<size_t>(job);
  if (j < jobs_.size() && jobs_[j].seen) {
    return for_maps ? jobs_[j].demand_maps : jobs_[j].demand_reduces;
  }
  return JobDemand(state.job(job), for_maps);
}

int32_t FairOrder::PoolId(JobId id, const Job& job) {
  const std::string& name = PoolName(job);
  const size_t j = static_cast<size_t>(id);
  if (j < job_pool_.size() && job_pool_[j] >= 0 &&
      pool_names_[static_cast<size_t>(job_pool_[j])] == name) {
    return job_pool_[j];
  }
  auto [it, added] = pool_ids_.try_emplace(name, static_cast<int32_t>(pool_names_.size()));
  if (added) pool_names_.push_back(name);
  if (job_pool_.size() <= j) job_pool_.resize(j + 1, -1);
  job_pool_[j] = it->second;
  return it->second;
}

void FairOrder::Update(const ClusterState& state, TimeMs) {
  jobs_.assign(state.jobs().size(), Cached{});
  share_jobs_.clear();
  for (JobId id : state.active_jobs()) {
    const Job& job = state.job(id);
    Cached& c = jobs_[static_cast<size_t>(id)];
    c.seen = true;
    c.demand_maps = JobDemand(job, true);
    c.demand_reduces = JobDemand(job, false);
    share_jobs_.push_back({id, PoolId(id, job), job.priority});
  }
  share_map_slots_ = state.total_map_slots();
  share_reduce_slots_ = state.total_reduce_slots();
  shares_stale_ = true;
  ++update_gen_;
}

void FairOrder::ComputeShares() const {
  if (!shares_stale_) return;
  shares_stale_ = false;
  pool_shares_.clear();
  job_shares_.assign(jobs_.size(), Shares{});
  // Pools in name order, each with its jobs in active order.
  std::vector<std::vector<const ShareJob*>> by_pool(pool_names_.size());
  for (const ShareJob& sj : share_jobs_) by_pool[static_cast<size_t>(sj.pool)].push_back(&sj);
  std::vector<size_t> pools;
  for (size_t p = 0; p < by_pool.size(); ++p) {
    if (!by_pool[p].empty()) pools.push_back(p);
  }
  std::sort(pools.begin(), pools.end(),
            [&](size_t a, size_t b) { return pool_names_[a] < pool_names_[b]; });
  auto demand = [&](JobId id, bool maps) {
    const Cached& c = jobs_[static_cast<size_t>(id)];
    return maps ? c.demand_maps : c.demand_reduces;
  };
  for (const bool maps : {true, false}) {
    std::vector<ShareInput> pool_inputs;
    for (size_t p : pools) {
      const PoolSpec& spec = Spec(pool_names_[p]);
      ShareInput in{spec.weight, static_cast<double>(maps ? spec.min_maps : spec.min_reduces), 0};
      for (const ShareJob* sj : by_pool[p]) in.demand += demand(sj->id, maps);
      pool_inputs.push_back(in);
    }
    const double slots = maps ? share_map_slots_ : share_reduce_slots_;
    const std::vector<double> pool_share = ComputeFairShares(pool_inputs, slots);
    for (size_t i = 0; i < pools.size(); ++i) {
      const size_t p = pools[i];
      const std::string& name = pool_names_[p];
      const double share = pool_share[i];
      (maps ? pool_shares_[name].map : pool_shares_[name].reduce) = share;
      if (Spec(name).fifo) continue;  // FIFO pools give their jobs share 0
      std::vector<ShareInput> job_inputs;
      for (const ShareJob* sj : by_pool[p]) {
        job_inputs.push_back(
            {PriorityWeight(sj->priority), 0, static_cast<double>(demand(sj->id, maps))});
      }
      const std::vector<double> job_share = ComputeFairShares(job_inputs, share);
      for (size_t k = 0; k < by_pool[p].size(); ++k) {
        Shares& s = job_shares_[static_cast<size_t>(by_pool[p][k]->id)];
        (maps ? s.map : s.reduce) = job_share[k];
      }
    }
  }
}

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
  c.live_demand = true;
  c.pools.clear();
  c.pool_index.clear();
  c.jobs.clear();
}

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
  std::span<const JobId> changed;
  if (!c.live_demand && c.update_gen == update_gen_ && *jobs == c.input &&
      state.ChangedJobsSince(c.log_seq, &changed)) {
    // The same jobs and demands as the last full pass: only the jobs the
    // state logged as changed since can have a new key.
    for (JobId id : changed) Recheck(state, for_maps, c, id);
  } else {
    FullPass(state, for_maps, *jobs, c, epoch);
    if (c.state == nullptr) {  // an id asked twice
      SortFresh(state, for_maps, jobs);
      return;
    }
  }
  c.log_seq = state.change_seq();
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

void FairOrder::Recheck(const ClusterState& state, bool for_maps, OrderCache& c, JobId id) const {
  if (id < 0 || static_cast<size_t>(id) >= c.jobs.size()) return;
  JobEntry& e = c.jobs[static_cast<size_t>(id)];
  if (!e.in || e.moved) return;  // not asked by the last full pass, or already out
  const Job& job = state.job(id);
  const int running = Running(job, for_maps);
  if (running == e.running && job.priority == e.priority && job.submit_ms == e.submit_ms) return;
  PoolEntry& p = c.pools[static_cast<size_t>(e.pool)];
  p.running += running - e.running;
  if (job.priority != e.priority || job.submit_ms != e.submit_ms || !p.spec.fifo) {
    // Out of the list, found by the key it was placed with; PlaceAndOrder
    // puts it back by the new one.
    auto before = [&c](JobId a, JobId b) { return InPoolBefore(c, a, b); };
    auto at = std::lower_bound(p.jobs.begin(), p.jobs.end(), id, before);
    if (at == p.jobs.end() || *at != id) {
      std::cerr << "FairOrder: job " << id << " is not where its cached key puts it"
                << " (did the host change its pool?)\n";
      std::abort();
    }
    p.jobs.erase(at);
    e.moved = true;
    c.placed.push_back(id);
  }
  e.running = running;
  e.priority = job.priority;
  e.submit_ms = job.submit_ms;
}

void FairOrder::FullPass(const ClusterState& state, bool for_maps, const std::vector<JobId>& input,
                         OrderCache& c, uint64_t epoch) const {
  const std::vector<JobId>* jobs = &input;
  c.input = input;
  c.update_gen = update_gen_;
  c.live_demand = false;
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
      if (e.pool < 0) {
        const std::string& name = PoolName(job);
        auto [it, added] = c.pool_index.try_emplace(name, static_cast<int32_t>(c.pools.size()));
        if (added) {
          c.pools.emplace_back();
          c.pools.back().spec = Spec(name);
          int rank = 0;
          for (const auto& [n, i] : c.pool_index) c.pools[static_cast<size_t>(i)].rank = rank++;
        }
        e.pool = it->second;
      }
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
    PoolEntry& p = c.pools[static_cast<size_t>(e.pool)];
    p.running += running;
    const size_t j = static_cast<size_t>(id);
    if (j < jobs_.size() && jobs_[j].seen) {
      p.demand += for_maps ? jobs_[j].demand_maps : jobs_[j].demand_reduces;
    } else {
      p.demand += JobDemand(job, for_maps);
      c.live_demand = true;
    }
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

double FairOrder::PoolFairShare(const std::string& pool, bool for_maps) const {
  ComputeShares();
  auto it = pool_shares_.find(pool);
  if (it == pool_shares_.end()) return 0;
  return for_maps ? it->second.map : it->second.reduce;
}

double FairOrder::JobFairShare(JobId job, bool for_maps) const {
  const size_t j = static_cast<size_t>(job);
  if (job < 0 || j >= jobs_.size() || !jobs_[j].seen) return 0;
  ComputeShares();
  return for_maps ? job_shares_[j].map : job_shares_[j].reduce;
}

}  // namespace mr::sched
