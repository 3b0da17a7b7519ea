#include "master/link_costs.h"

#include <algorithm>

namespace mr::master {

bool LinkCosts::Report(sched::NodeId reader, const std::map<int32_t, double>& rates) {
  std::map<int32_t, double> kept;
  for (const auto& [dc, rate] : rates) {
    if (rate > 0) kept[dc] = rate;
  }
  const size_t i = static_cast<size_t>(reader);
  if (i >= by_node_.size()) by_node_.resize(i + 1);
  if (by_node_[i] == kept) return false;
  by_node_[i] = std::move(kept);
  return true;
}

double LinkCosts::Rate(const sched::ClusterState& state, int32_t from, int32_t to) const {
  std::vector<double> seen;
  for (size_t n = 0; n < by_node_.size() && n < state.nodes().size(); ++n) {
    if (state.nodes()[n].datacenter != to) continue;
    if (auto it = by_node_[n].find(from); it != by_node_[n].end()) seen.push_back(it->second);
  }
  if (seen.empty()) return 0;
  std::sort(seen.begin(), seen.end());
  const size_t m = seen.size() / 2;
  return seen.size() % 2 ? seen[m] : (seen[m - 1] + seen[m]) / 2;
}

std::vector<std::vector<double>> LinkCosts::Build(const sched::ClusterState& state) const {
  constexpr double kMiB = 1048576.0;
  const int dcs = state.datacenters();
  // Datacenter pair costs, s/MiB; < 0 = not measured.
  std::vector<std::vector<double>> pair(static_cast<size_t>(dcs), std::vector<double>(static_cast<size_t>(dcs), -1));
  double sum = 0, cheapest = 0;
  int measured = 0;
  for (int32_t from = 0; from < dcs; ++from) {
    for (int32_t to = 0; to < dcs; ++to) {
      if (from == to) continue;
      const double rate = Rate(state, from, to);
      if (rate <= 0) continue;
      const double cost = kMiB / rate;
      pair[static_cast<size_t>(from)][static_cast<size_t>(to)] = cost;
      sum += cost;
      cheapest = measured == 0 ? cost : std::min(cheapest, cost);
      ++measured;
    }
  }
  if (measured == 0) return {};
  const double unmeasured = sum / measured;
  const size_t n = state.nodes().size();
  std::vector<std::vector<double>> out(n, std::vector<double>(n, 0.0));
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      const sched::Node& x = state.nodes()[a];
      const sched::Node& y = state.nodes()[b];
      if (x.datacenter != y.datacenter) {
        const double c = pair[static_cast<size_t>(x.datacenter)][static_cast<size_t>(y.datacenter)];
        out[a][b] = c >= 0 ? c : unmeasured;
      } else {
        const double hops = x.rack >= 0 && x.rack == y.rack ? 1 : 2;
        out[a][b] = hops / 4 * cheapest;
      }
    }
  }
  return out;
}

}  // namespace mr::master
