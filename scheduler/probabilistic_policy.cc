#include "scheduler/probabilistic_policy.h"

#include <cmath>
#include <random>
#include <utility>

namespace mr::sched {

double MapCost(const ClusterState& state, const MapTask& m, NodeId node) {
  double nearest = -1;
  for (NodeId r : m.replicas) {
    if (!state.node(r).live) continue;  // a lost replica cannot be read
    const double d = state.Distance(r, node);
    if (nearest < 0 || d < nearest) nearest = d;
  }
  return nearest < 0 ? -1 : static_cast<double>(m.bytes) * nearest;
}

double ReduceCost(const ClusterState& state, const Job& job, int32_t f, NodeId node) {
  const size_t part = static_cast<size_t>(f);
  double cost = 0;
  for (const MapTask& m : job.maps) {
    if (m.state == TaskState::kPending || m.node == kNoNode) continue;  // x_jp = 0
    if (part >= m.partition_bytes.size() || m.partition_bytes[part] <= 0) continue;
    double out = static_cast<double>(m.partition_bytes[part]);  // A_jf
    if (m.state == TaskState::kRunning && m.bytes_read > 0) {
      out *= static_cast<double>(m.bytes) / static_cast<double>(m.bytes_read);  // Eq. 3
    }
    cost += state.Distance(m.node, node) * out;
  }
  return cost;
}

double PlacementProbability(double c_avg, double c) {
  if (c <= 0) return 1;
  return 1 - std::exp(-c_avg / c);
}

ProbabilisticPolicy::ProbabilisticPolicy(ProbabilisticOptions options,
                                         std::unique_ptr<JobOrder> order,
                                         std::function<double()> draw)
    : options_(options), order_(std::move(order)), draw_(std::move(draw)) {}

void ProbabilisticPolicy::UpdateOrder(const ClusterState& state, TimeMs now) {
  order_->Update(state, now);
  last_update_ms_ = now;
  updated_ = true;
}

void ProbabilisticPolicy::OnJobAdded(const ClusterState& state, JobId, TimeMs now) {
  UpdateOrder(state, now);
}

void ProbabilisticPolicy::OnJobFinished(const ClusterState& state, JobId, TimeMs now) {
  UpdateOrder(state, now);
}

int64_t& ProbabilisticPolicy::Skips(JobId job, bool maps) {
  std::vector<int64_t>& v = maps ? map_skips_ : reduce_skips_;
  const size_t i = static_cast<size_t>(job);
  if (i >= v.size()) v.resize(i + 1, 0);
  return v[i];
}

std::vector<JobId> ProbabilisticPolicy::Ordered(const ClusterState& state, bool maps) const {
  std::vector<JobId> jobs = state.active_jobs();
  order_->Sort(state, maps, &jobs);
  return jobs;
}

bool ProbabilisticPolicy::Accept(double p, int64_t& skips) {
  bool take;
  if (options_.max_skips > 0 && skips >= options_.max_skips) {
    take = true;  // step 4: the escape
  } else if (p < options_.p_min) {
    take = false;  // Alg. 1 lines 10-12
  } else {
    take = p >= 1 || draw_() < p;  // lines 13-16
  }
  skips = take ? 0 : skips + 1;
  return take;
}

ProbabilisticPolicy::Offer ProbabilisticPolicy::OfferMap(const ClusterState& state, JobId id,
                                                         NodeId node, Launcher& launcher) {
  const Job& job = state.job(id);
  if (job.pending_maps() <= 0) return Offer::kNone;
  // a. The cheapest located map (lowest index on ties), else the first
  // map with no live replica.
  int32_t best = -1, unlocated = -1;
  double best_cost = 0;
  for (const MapTask& m : job.maps) {
    if (m.state != TaskState::kPending) continue;
    const double c = MapCost(state, m, node);
    if (c < 0) {
      if (unlocated < 0) unlocated = m.index;
    } else if (best < 0 || c < best_cost) {
      best = m.index;
      best_cost = c;
    }
  }
  // b. Eq. 4 over the live nodes with a free map slot (Alg. 1 line 6).
  double p = 1 - std::exp(-1.0);  // no location: the same cost everywhere
  if (best >= 0 && best_cost > 0) {
    const MapTask& m = job.maps[static_cast<size_t>(best)];
    double sum = 0;
    int n = 0;
    for (const Node& k : state.nodes()) {
      if (k.free_map_slots() <= 0) continue;
      sum += MapCost(state, m, k.id);
      ++n;
    }
    p = PlacementProbability(sum / n, best_cost);  // n ≥ 1: `node` is free
  } else if (best >= 0) {
    p = 1;  // local data: "always assigned to D_i" (§II-C)
  } else {
    best = unlocated;
  }
  if (best < 0) return Offer::kNone;
  if (!Accept(p, Skips(id, /*maps=*/true))) return Offer::kDeclined;
  launcher.LaunchMap(id, best);
  return Offer::kLaunched;
}

ProbabilisticPolicy::Offer ProbabilisticPolicy::OfferReduce(const ClusterState& state, JobId id,
                                                            NodeId node, Launcher& launcher) {
  const Job& job = state.job(id);
  if (job.pending_reduces() <= 0 || !job.reduces_may_start()) return Offer::kNone;
  int32_t best = -1;
  double best_cost = 0;
  for (const ReduceTask& r : job.reduces) {
    if (r.state == TaskState::kRunning && r.node == node) return Offer::kNone;  // Alg. 2 line 1
  }
  for (const ReduceTask& r : job.reduces) {
    if (r.state != TaskState::kPending) continue;
    const double c = ReduceCost(state, job, r.index, node);
    if (best < 0 || c < best_cost) {
      best = r.index;
      best_cost = c;
    }
  }
  if (best < 0) return Offer::kNone;
  double p = 1;
  if (best_cost > 0) {  // Eq. 5 over the live nodes with a free reduce slot (§II-D)
    double sum = 0;
    int n = 0;
    for (const Node& k : state.nodes()) {
      if (k.free_reduce_slots() <= 0) continue;
      sum += ReduceCost(state, job, best, k.id);
      ++n;
    }
    p = PlacementProbability(sum / n, best_cost);
  }
  if (!Accept(p, Skips(id, /*maps=*/false))) return Offer::kDeclined;
  launcher.LaunchReduce(id, best);
  return Offer::kLaunched;
}

void ProbabilisticPolicy::Assign(const ClusterState& state, const Heartbeat& hb,
                                 Launcher& launcher) {
  const NodeId node = hb.node;
  if (!state.node(node).live) return;
  if (!updated_ || hb.now - last_update_ms_ >= kUpdateIntervalMs) UpdateOrder(state, hb.now);
  for (bool maps : {true, false}) {
    const auto free = [&] {
      return maps ? state.node(node).free_map_slots() : state.node(node).free_reduce_slots();
    };
    bool launched = true;
    while (launched && free() > 0) {
      launched = false;
      for (JobId id : Ordered(state, maps)) {
        const Offer o =
            maps ? OfferMap(state, id, node, launcher) : OfferReduce(state, id, node, launcher);
        if (o == Offer::kLaunched) {
          launched = true;
          break;
        }
      }
    }
  }
}

const PolicyInfo& ProbabilisticPolicyInfo() {
  static const PolicyInfo info{
      "probabilistic",
      "Probabilistic network-aware task placement (Shen, Sarker, Yu & Deng, paper 002, §II, "
      "Algs. 1-2, Eqs. 1-5) over the Hadoop Fair Scheduler's (or FIFO) job order",
      {
          {"p_min", 0.4, "P_min: skip an offer whose launch probability is below it (§III: 0.4)"},
          {"max_skips", int64_t{8},
           "declined offers in a row after which a job launches anyway (not in the paper; 0 = "
           "never, may starve)"},
          {"job_order", std::string("fair"), "job-level order: \"fair\" (§III) or \"fifo\""},
      },
      [](const SchedulerParams& params,
         const SchedulerEnv& env) -> Result<std::unique_ptr<Scheduler>> {
        ProbabilisticOptions o;
        o.p_min = ParamDouble(params, "p_min");
        o.max_skips = ParamInt(params, "max_skips");
        const std::string& order_name = ParamString(params, "job_order");
        if (!(o.p_min >= 0 && o.p_min <= 1)) {
          return Status::InvalidArgument("p_min must be in [0, 1], got " + std::to_string(o.p_min));
        }
        if (o.max_skips < 0) {
          return Status::InvalidArgument("max_skips must be >= 0, got " +
                                         std::to_string(o.max_skips));
        }
        std::unique_ptr<JobOrder> order;
        if (order_name == "fair") {
          order = std::make_unique<FairOrder>();
        } else if (order_name == "fifo") {
          order = std::make_unique<FifoOrder>();
        } else {
          return Status::InvalidArgument("job_order must be \"fair\" or \"fifo\", got \"" +
                                         order_name + "\"");
        }
        auto rng = std::make_shared<std::mt19937_64>(env.seed);
        auto draw = [rng] { return std::uniform_real_distribution<double>(0.0, 1.0)(*rng); };
        return std::unique_ptr<Scheduler>(new ProbabilisticPolicy(o, std::move(order), draw));
      }};
  return info;
}

}  // namespace mr::sched
