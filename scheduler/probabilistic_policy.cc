#include "scheduler/probabilistic_policy.h"

#include <cmath>
#include <random>
#include <utility>
#include <vector>

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

namespace {

// Î_jf: map `m`'s output for partition `part`, estimated from its progress
// (Eq. 3); 0 for a map not placed (x_jp = 0) or with nothing for `part`.
double EstimatedOutput(const MapTask& m, size_t part) {
  if (m.state == TaskState::kPending || m.node == kNoNode) return 0;
  if (part >= m.partition_bytes.size() || m.partition_bytes[part] <= 0) return 0;
  double out = static_cast<double>(m.partition_bytes[part]);  // A_jf
  if (m.state == TaskState::kRunning && m.bytes_read > 0) {
    out *= static_cast<double>(m.bytes) / static_cast<double>(m.bytes_read);  // Eq. 3
  }
  return out;
}

// Alg. 1 line 9 / Alg. 2 line 10: does a candidate of cost `c` and mean
// cost `avg` over the free nodes beat the best so far? The larger P =
// 1 − exp(−avg / c) wins, compared as the ratio avg / c (P is increasing in
// it; the ratio is exact where two P's could round alike); a cost of 0 is
// P = 1. Ties in P (the paper is silent): the cheaper, then the earlier
// candidate (the caller scans by index).
bool Beats(double c, double avg, double best_c, double best_avg) {
  const bool local = c <= 0, best_local = best_c <= 0;
  if (local != best_local) return local;
  if (!local) {
    const double r = avg / c, best_r = best_avg / best_c;
    if (r != best_r) return r > best_r;
  }
  return c < best_c;
}

}  // namespace

double ReduceCost(const ClusterState& state, const Job& job, int32_t f, NodeId node) {
  const size_t part = static_cast<size_t>(f);
  double cost = 0;
  for (const MapTask& m : job.maps) {
    const double out = EstimatedOutput(m, part);
    if (out > 0) cost += state.Distance(m.node, node) * out;
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
  // a. Eq. 1 for every pending map on `node`; a local one (C = 0, P = 1)
  // wins at once (the first: the cheapest possible, and P cannot be larger).
  int32_t best = -1, unlocated = -1;
  double best_cost = 0, best_avg = 0;
  std::vector<std::pair<int32_t, double>> remote;  // (index, C) of located maps
  for (const MapTask& m : job.maps) {
    if (m.state != TaskState::kPending) continue;
    const double c = MapCost(state, m, node);
    if (c < 0) {
      if (unlocated < 0) unlocated = m.index;
    } else if (c == 0) {
      best = m.index;
      break;
    } else {
      remote.emplace_back(m.index, c);
    }
  }
  double p = 1;  // local data: "always assigned to D_i" (§II-C)
  if (best < 0 && !remote.empty()) {
    // b. C_avg over the live nodes with a free map slot (Alg. 1 line 6) for
    // each, and the largest P (line 9; ties: Beats).
    for (const auto& [index, c] : remote) {
      const MapTask& m = job.maps[static_cast<size_t>(index)];
      double sum = 0;
      for (NodeId k : free_nodes_) sum += MapCost(state, m, k);
      const double avg = sum / static_cast<double>(free_nodes_.size());  // ≥ 1: `node`
      if (best < 0 || Beats(c, avg, best_cost, best_avg)) {
        best = index;
        best_cost = c;
        best_avg = avg;
      }
    }
    p = PlacementProbability(best_avg, best_cost);
  } else if (best < 0) {
    best = unlocated;
    p = 1 - std::exp(-1.0);  // no location: the same cost everywhere
  }
  if (best < 0) return Offer::kNone;
  if (!Accept(p, Skips(id, /*maps=*/true))) return Offer::kDeclined;
  launcher.LaunchMap(id, best);
  return Offer::kLaunched;
}

// Eq. 3 for every pending reduce on every candidate node, through the
// estimated output per partition summed by the node it lies on (W[p][f]),
// so that a cost is O(nodes holding output) instead of O(maps); reduces
// whose columns of W are equal (the same sizes everywhere) are costed once.
ProbabilisticPolicy::Offer ProbabilisticPolicy::OfferReduce(const ClusterState& state, JobId id,
                                                            NodeId node, Launcher& launcher) {
  const Job& job = state.job(id);
  if (job.pending_reduces() <= 0 || !job.reduces_may_start()) return Offer::kNone;
  // Alg. 2 line 1: a node running a reduce of the job is no candidate —
  // neither `node` (no offer) nor any other (not in C_avg's N_r).
  std::vector<char> busy(state.nodes().size(), 0);
  for (const ReduceTask& r : job.reduces) {
    if (r.state == TaskState::kRunning) busy[static_cast<size_t>(r.node)] = 1;
  }
  if (busy[static_cast<size_t>(node)]) return Offer::kNone;
  std::vector<NodeId> nodes;  // the N_r candidates; `node` is one
  for (NodeId k : free_nodes_) {
    if (!busy[static_cast<size_t>(k)]) nodes.push_back(k);
  }
  std::vector<int32_t> pending;
  for (const ReduceTask& r : job.reduces) {
    if (r.state == TaskState::kPending) pending.push_back(r.index);
  }
  // W: rows = nodes holding output, columns = pending reduces.
  std::vector<NodeId> places;
  std::vector<int32_t> row(state.nodes().size(), -1);
  std::vector<double> w;
  const size_t cols = pending.size();
  for (const MapTask& m : job.maps) {
    if (m.state == TaskState::kPending || m.node == kNoNode) continue;
    int32_t& r = row[static_cast<size_t>(m.node)];
    if (r < 0) {
      r = static_cast<int32_t>(places.size());
      places.push_back(m.node);
      w.resize(w.size() + cols, 0.0);
    }
    for (size_t f = 0; f < cols; ++f) {
      w[static_cast<size_t>(r) * cols + f] += EstimatedOutput(m, static_cast<size_t>(pending[f]));
    }
  }
  const auto cost = [&](size_t f, NodeId k) {
    double c = 0;
    for (size_t p = 0; p < places.size(); ++p) {
      const double out = w[p * cols + f];
      if (out > 0) c += state.Distance(places[p], k) * out;
    }
    return c;
  };
  const auto same_column = [&](size_t f, size_t g) {
    for (size_t p = 0; p < places.size(); ++p) {
      if (w[p * cols + f] != w[p * cols + g]) return false;
    }
    return true;
  };
  int32_t best = -1;
  double best_cost = 0, best_avg = 0;
  size_t last = 0;  // the previous column costed
  double last_cost = 0, last_avg = 0;
  for (size_t f = 0; f < cols; ++f) {
    double c, avg;
    if (f > 0 && same_column(f, last)) {
      c = last_cost;
      avg = last_avg;
    } else {
      c = cost(f, node);
      double sum = 0;
      if (c > 0) {
        for (NodeId k : nodes) sum += k == node ? c : cost(f, k);
      }
      avg = sum / static_cast<double>(nodes.size());
      last = f;
      last_cost = c;
      last_avg = avg;
    }
    if (best < 0 || Beats(c, avg, best_cost, best_avg)) {
      best = pending[f];
      best_cost = c;
      best_avg = avg;
    }
  }
  if (best < 0) return Offer::kNone;
  const double p = PlacementProbability(best_avg, best_cost);  // Eq. 5; 1 when C = 0
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
    // The live nodes with a free slot (N_m, N_r): constant through the
    // phase, since only `node` launches and it stays free while it may.
    free_nodes_.clear();
    for (const Node& k : state.nodes()) {
      if (maps ? k.free_map_slots() > 0 : k.free_reduce_slots() > 0) free_nodes_.push_back(k.id);
    }
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
      "Shen, Sarker, Yu & Deng, \"Probabilistic Network-Aware Task Placement for MapReduce "
      "Scheduling\", IEEE CLUSTER 2016, §II, Algs. 1-2, Eqs. 1-5; over the Hadoop Fair Scheduler's (or FIFO) job order",
      {
          {"p_min", 0.4, "P_min: skip an offer whose launch probability is below it (§III: 0.4)"},
          {"max_skips", int64_t{0},
           "declined offers in a row after which a job launches anyway (not in the paper; "
           "0 = never, the paper's rule, may starve)"},
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
