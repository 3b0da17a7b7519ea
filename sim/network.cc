// Network: every link a FIFO server of the bytes that cross it (see network.h).
#include "sim/network.h"

#include <algorithm>

namespace mr::sim {

// Links: [2 per node][2 per rack][2 per datacenter]; even = out, odd = in.
Network::Network(const NetworkSpec& spec, const sched::ClusterState& state)
    : spec_(spec), state_(state) {
  int racks = 0;
  for (const sched::Node& n : state.nodes()) racks = std::max(racks, n.rack + 1);
  const size_t nodes = state.nodes().size();
  rack_base_ = 2 * nodes;
  dc_base_ = rack_base_ + 2 * static_cast<size_t>(racks);
  links_.resize(dc_base_ + 2 * static_cast<size_t>(state.datacenters()));
  for (size_t i = 0; i < links_.size(); ++i) {
    links_[i].mb_s = i < rack_base_ ? spec.node_mb_s : i < dc_base_ ? spec.rack_mb_s : spec.dc_mb_s;
  }
}

Span Network::SpanOf(sched::NodeId from, sched::NodeId to) const {
  if (from == to) return Span::kNode;
  const sched::Node& a = state_.node(from);
  const sched::Node& b = state_.node(to);
  if (a.datacenter != b.datacenter) return Span::kOffDatacenter;
  if (a.rack >= 0 && a.rack == b.rack) return Span::kRack;
  return Span::kDatacenter;
}

void Network::Path(sched::NodeId from, sched::NodeId to) {
  path_.clear();
  const sched::Node& a = state_.node(from);
  const sched::Node& b = state_.node(to);
  path_.push_back(2 * static_cast<size_t>(from));
  const bool cross_rack = a.rack >= 0 && b.rack >= 0 && a.rack != b.rack;
  if (cross_rack) path_.push_back(rack_base_ + 2 * static_cast<size_t>(a.rack));
  if (a.datacenter != b.datacenter) {
    path_.push_back(dc_base_ + 2 * static_cast<size_t>(a.datacenter));
    path_.push_back(dc_base_ + 2 * static_cast<size_t>(b.datacenter) + 1);
  }
  if (cross_rack) path_.push_back(rack_base_ + 2 * static_cast<size_t>(b.rack) + 1);
  path_.push_back(2 * static_cast<size_t>(to) + 1);
}

double Network::Transfer(sched::NodeId from, sched::NodeId to, double mb, double now) {
  if (!spec_.enabled || from == to) return now;
  Path(from, to);
  double end = now;
  for (size_t l : path_) {
    Link& link = links_[l];
    if (link.mb_s <= 0) continue;
    link.free_at = std::max(link.free_at, now) + mb / link.mb_s * 1000.0;
    end = std::max(end, link.free_at);
  }
  return end + spec_.latency_ms;
}

std::vector<std::vector<double>> Network::UnitCosts() {
  const size_t n = state_.nodes().size();
  std::vector<double> senders(links_.size(), 0);  // nodes behind each link
  for (const sched::Node& node : state_.nodes()) {
    senders[2 * static_cast<size_t>(node.id)] += 1;
    senders[2 * static_cast<size_t>(node.id) + 1] += 1;
    if (node.rack >= 0) {
      senders[rack_base_ + 2 * static_cast<size_t>(node.rack)] += 1;
      senders[rack_base_ + 2 * static_cast<size_t>(node.rack) + 1] += 1;
    }
    senders[dc_base_ + 2 * static_cast<size_t>(node.datacenter)] += 1;
    senders[dc_base_ + 2 * static_cast<size_t>(node.datacenter) + 1] += 1;
  }
  std::vector<std::vector<double>> cost(n, std::vector<double>(n, 0.0));
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      Path(static_cast<sched::NodeId>(a), static_cast<sched::NodeId>(b));
      double worst = 0;
      for (size_t l : path_) {
        if (links_[l].mb_s > 0) worst = std::max(worst, 1000.0 * senders[l] / links_[l].mb_s);
      }
      cost[a][b] = worst;
    }
  }
  return cost;
}

}  // namespace mr::sim
