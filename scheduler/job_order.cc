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

// 2^priority for the five clamped priorities (exact: powers of two), read
// by every comparison of a sort.
double PriorityWeight(int priority) {
  static constexpr double kWeight[] = {0.25, 0.5, 1.0, 2.0, 4.0};
  return kWeight[std::clamp(priority, -2, 2) + 2];
}

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
  if (demand_.seen(job)) return demand_.demand(job, for_maps);
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

// O(jobs changed since the last Update): DemandSnapshot re-reads only
// those, and so do the share keys (a job's pool and priority change only
// with a logged change of the job).
void FairOrder::Update(const ClusterState& state, TimeMs) {
  demand_.Refresh(state);
  for (JobId id : demand_.reread()) {
    if (!demand_.seen(id)) continue;
    const Job& job = state.job(id);
    const auto j = static_cast<size_t>(id);
    if (share_keys_.size() <= j) share_keys_.resize(j + 1);
    share_keys_[j] = {PoolId(id, job), job.priority};
  }
  share_map_slots_ = state.total_map_slots();
  share_reduce_slots_ = state.total_reduce_slots();
  shares_stale_ = true;
}

void FairOrder::ComputeShares() const {
  if (!shares_stale_) return;
  shares_stale_ = false;
  pool_shares_.clear();
  job_shares_.assign(share_keys_.size(), Shares{});
  // Pools in name order, each with its jobs in active order.
  struct ShareJob {
    JobId id;
    int priority;
  };
  std::vector<std::vector<ShareJob>> by_pool(pool_names_.size());
  for (JobId id : demand_.active()) {
    const ShareKey& k = share_keys_[static_cast<size_t>(id)];
    by_pool[static_cast<size_t>(k.pool)].push_back({id, k.priority});
  }
  std::vector<size_t> pools;
  for (size_t p = 0; p < by_pool.size(); ++p) {
    if (!by_pool[p].empty()) pools.push_back(p);
  }
  std::sort(pools.begin(), pools.end(),
            [&](size_t a, size_t b) { return pool_names_[a] < pool_names_[b]; });
  auto demand = [&](JobId id, bool maps) { return demand_.demand(id, maps); };
  for (const bool maps : {true, false}) {
    std::vector<ShareInput> pool_inputs;
    for (size_t p : pools) {
      const PoolSpec& spec = Spec(pool_names_[p]);
      ShareInput in{spec.weight, static_cast<double>(maps ? spec.min_maps : spec.min_reduces), 0};
      for (const ShareJob& sj : by_pool[p]) in.demand += demand(sj.id, maps);
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
      for (const ShareJob& sj : by_pool[p]) {
        job_inputs.push_back(
            {PriorityWeight(sj.priority), 0, static_cast<double>(demand(sj.id, maps))});
      }
      const std::vector<double> job_share = ComputeFairShares(job_inputs, share);
      for (size_t k = 0; k < by_pool[p].size(); ++k) {
        Shares& s = job_shares_[static_cast<size_t>(by_pool[p][k].id)];
        (maps ? s.map : s.reduce) = job_share[k];
      }
    }
  }
}

double FairOrder::PoolFairShare(const std::string& pool, bool for_maps) const {
  ComputeShares();
  auto it = pool_shares_.find(pool);
  if (it == pool_shares_.end()) return 0;
  return for_maps ? it->second.map : it->second.reduce;
}

double FairOrder::JobFairShare(JobId job, bool for_maps) const {
  if (!demand_.seen(job)) return 0;
  ComputeShares();
  const auto j = static_cast<size_t>(job);
  return for_maps ? job_shares_[j].map : job_shares_[j].reduce;
}

}  // namespace mr::sched
