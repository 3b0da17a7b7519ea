#include "dfs/link_rates.h"

#include <algorithm>

namespace mr::dfs {

void OrderByLinkRate(std::string_view reader_dc, const LinkRateEstimates& estimates,
                     std::vector<const pb::ReplicaLocation*>* replicas) {
  if (reader_dc.empty()) return;
  std::vector<size_t> slots;  // places held by replicas in other datacenters
  std::vector<const pb::ReplicaLocation*> others;
  for (size_t i = 0; i < replicas->size(); ++i) {
    if ((*replicas)[i]->datacenter() == reader_dc) continue;
    slots.push_back(i);
    others.push_back((*replicas)[i]);
  }
  // Unmeasured first (rank 0), then measured (rank 1) fastest first.
  auto key = [&](const pb::ReplicaLocation* r) {
    auto it = estimates.find(r->datacenter());
    return it == estimates.end() ? std::pair<int, double>(0, 0.0)
                                 : std::pair<int, double>(1, -it->second);
  };
  std::stable_sort(others.begin(), others.end(),
                   [&](const auto* a, const auto* b) { return key(a) < key(b); });
  for (size_t k = 0; k < slots.size(); ++k) (*replicas)[slots[k]] = others[k];
}

void LinkRates::RecordRead(std::string_view reader_dc, const pb::ReplicaLocation& from,
                           int64_t bytes, double seconds) {
  if (reader_dc.empty() || from.datacenter() == reader_dc) return;
  std::lock_guard lock(mu_);
  auto it = links_.find(from.datacenter());
  if (it == links_.end()) it = links_.emplace(from.datacenter(), Link{}).first;
  Link& link = it->second;
  ++link.reads;
  link.bytes += std::max<int64_t>(bytes, 0);
  if (bytes < kMinRateSampleBytes || !(seconds > 0)) return;
  ++link.samples;
  link.window.push_back(static_cast<double>(bytes) / seconds);
  while (link.window.size() > kRateWindow) link.window.pop_front();
}

LinkRateEstimates LinkRates::Estimates() const {
  std::lock_guard lock(mu_);
  LinkRateEstimates out;
  for (const auto& [dc, link] : links_) {
    if (!link.window.empty()) out.emplace(dc, Median(link.window));
  }
  return out;
}

std::vector<LinkRateStats> LinkRates::Stats() const {
  std::lock_guard lock(mu_);
  std::vector<LinkRateStats> out;
  for (const auto& [dc, link] : links_) {
    out.push_back({dc, link.reads, link.bytes, link.samples,
                   link.window.empty() ? 0.0 : Median(link.window)});
  }
  return out;
}

// The middle sample; with an even count, the mean of the two middle ones.
double LinkRates::Median(const std::deque<double>& window) {
  std::vector<double> v(window.begin(), window.end());
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace mr::dfs
