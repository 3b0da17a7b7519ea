// Network: the links a transfer crosses and when it ends (Joint §3.2, Fig. 2).
//
// Links: each node's up- and down-link (capacity B1), each rack's uplink and
// downlink (B2), each datacenter's egress and ingress. A transfer from a to b
// crosses up(a), [rack up(a), [dc out(a), dc in(b)], rack down(b)], down(b):
// the rack links only between racks, the datacenter links only between
// datacenters (without racks, nodes of one datacenter talk through their
// own links only).
//
// Model: every link is a FIFO server of the bytes that cross it, at its
// capacity; a transfer ends when every link on its path has served its
// bytes, plus the latency. A link is work-conserving (never idle while a
// transfer waits for it) and never carries more than its capacity; the
// links of one path serve their shares independently (no max-min sharing,
// no store-and-forward order). Deterministic, O(path length) per transfer.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/cluster_state.h"
#include "sim/scenario.h"

namespace mr::sim {

// Where two nodes are relative to each other.
enum class Span : int8_t { kNode = 0, kRack = 1, kDatacenter = 2, kOffDatacenter = 3 };

class Network {
 public:
  // REQUIRES: the nodes of `state` are all added.
  Network(const NetworkSpec& spec, const sched::ClusterState& state);

  Span SpanOf(sched::NodeId from, sched::NodeId to) const;

  // Queues `mb` megabytes from `from` to `to` on every link of the path at
  // `now`; returns the time (ms) the last link has carried them. A transfer
  // within a node, or with the model disabled, ends at `now`.
  double Transfer(sched::NodeId from, sched::NodeId to, double mb, double now);

  bool enabled() const { return spec_.enabled; }

  // The cost matrix SimHost hands the policies with network.link_costs
  // (Shen §II-B3: "the inverse of the transmission rate of the path"), in
  // ms per MB: [a][b] = 1000 / the smallest fair share of a link on the
  // path from a to b, 0 on the diagonal. A link's fair share is its
  // capacity over the nodes that send through it — 1 for a node link, the
  // rack's nodes for a rack uplink (and its downlink likewise), the
  // datacenter's for its egress and ingress — the rate each gets when all
  // send at once. Nominal capacities, not the queues of the moment: the
  // FIFO links have no rate to observe until a transfer ends, and a
  // shuffle-heavy run keeps every link busy, where a measured rate tends
  // to the fair share. Unlimited links (0) cost nothing. REQUIRES:
  // node_mb_s > 0. O(nodes²); called once per run.
  std::vector<std::vector<double>> UnitCosts();

 private:
  struct Link {
    double mb_s = 0;      // 0 = unlimited
    double free_at = 0;   // ms
  };
  // Appends the indexes of the links from `from` to `to` into path_.
  void Path(sched::NodeId from, sched::NodeId to);

  NetworkSpec spec_;
  const sched::ClusterState& state_;
  std::vector<Link> links_;
  size_t rack_base_ = 0, dc_base_ = 0;
  std::vector<size_t> path_;
};

}  // namespace mr::sim
