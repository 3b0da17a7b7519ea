#include "scheduler/job_order.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <set>

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

void FairOrder::Update(const ClusterState& state, TimeMs) {
  jobs_.assign(state.jobs().size(), Cached{});
  pool_shares_.clear();
  std::map<std::string, std::vector<JobId>> pools;
  for (JobId id : state.active_jobs()) {
    const Job& job = state.job(id);
    Cached& c = jobs_[static_cast<size_t>(id)];
    c.seen = true;
    c.demand_maps = JobDemand(job, true);
    c.demand_reduces = JobDemand(job, false);
    pools[PoolName(job)].push_back(id);
  }
  for (const bool maps : {true, false}) {
    std::vector<ShareInput> pool_inputs;
    for (const auto& [name, ids] : pools) {
      const PoolSpec& spec = Spec(name);
      ShareInput in{spec.weight, static_cast<double>(maps ? spec.min_maps : spec.min_reduces), 0};
      for (JobId id : ids) in.demand += Demand(state, id, maps);
      pool_inputs.push_back(in);
    }
    const double slots = maps ? state.total_map_slots() : state.total_reduce_slots();
    const std::vector<double> pool_share = ComputeFairShares(pool_inputs, slots);
    size_t p = 0;
    for (const auto& [name, ids] : pools) {
      const double share = pool_share[p++];
      (maps ? pool_shares_[name].map : pool_shares_[name].reduce) = share;
      if (Spec(name).fifo) continue;  // FIFO pools give their jobs share 0
      std::vector<ShareInput> job_inputs;
      for (JobId id : ids) {
        job_inputs.push_back({PriorityWeight(state.job(id).priority), 0,
                              static_cast<double>(Demand(state, id, maps))});
      }
      const std::vector<double> job_share = ComputeFairShares(job_inputs, share);
      for (size_t i = 0; i < ids.size(); ++i) {
        Shares& s = jobs_[static_cast<size_t>(ids[i])].share;
        (maps ? s.map : s.reduce) = job_share[i];
      }
    }
  }
}

void FairOrder::Sort(const ClusterState& state, bool for_maps, std::vector<JobId>* jobs) const {
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

double FairOrder::PoolFairShare(const std::string& pool, bool for_maps) const {
  auto it = pool_shares_.find(pool);
  if (it == pool_shares_.end()) return 0;
  return for_maps ? it->second.map : it->second.reduce;
}

double FairOrder::JobFairShare(JobId job, bool for_maps) const {
  const size_t j = static_cast<size_t>(job);
  if (job < 0 || j >= jobs_.size() || !jobs_[j].seen) return 0;
  return for_maps ? jobs_[j].share.map : jobs_[j].share.reduce;
}

}  // namespace mr::sched
