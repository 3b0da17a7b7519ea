// LinkCosts: the read rates workers measured between datacenters (their
// heartbeats' link_rates, dfs/link_rates.h), turned into the distance
// matrix of the probabilistic policy (Shen §II-B3: "replace each element
// h_ab in distance matrix H by the inverse of the transmission rate of the
// path from node D_a to D_b"). JobTracker keeps one and hands the matrix to
// ClusterState::SetDistances while the hosted policy is "probabilistic".
//
// The matrix, [a][b] = the cost of moving data from node a to node b, in
// seconds per MiB (the policy only compares costs, so the unit scales out):
//   - a = b: 0;
//   - other datacenters: 1 / R(dc(a) → dc(b)), R = the median of the
//     estimates the workers of dc(b) reported for reads from dc(a);
//     a pair nobody measured costs the mean of the measured ones;
//   - the same datacenter (workers do not time reads there: they are never
//     reordered): hop counts scaled to the measurements, hops(a, b) / 4 ×
//     the cheapest measured pair (1 same rack, 2 same datacenter, as
//     ClusterState's hop counts, where another datacenter is 4) — so a read
//     inside a datacenter stays cheaper than any measured one across.
// Nothing measured: no matrix (Build returns empty; hop counts apply).
//
// Not thread-safe: the master's one thread calls it.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "scheduler/cluster_state.h"

namespace mr::master {

class LinkCosts {
 public:
  // Node `reader`'s current estimates: source datacenter index → bytes per
  // second (rates ≤ 0 are ignored). Replaces what it reported before; true
  // when that changed anything. Called at each heartbeat.
  bool Report(sched::NodeId reader, const std::map<int32_t, double>& rates);

  // The median estimate of readers in datacenter `to` for reads from
  // `from`, bytes per second; 0 when none reported one.
  double Rate(const sched::ClusterState& state, int32_t from, int32_t to) const;

  // The matrix for every node of `state` (see above); empty when nothing
  // is measured.
  std::vector<std::vector<double>> Build(const sched::ClusterState& state) const;

 private:
  std::vector<std::map<int32_t, double>> by_node_;  // NodeId → its last report
};

}  // namespace mr::master
