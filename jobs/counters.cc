#include "jobs/counters.h"

#include <charconv>

namespace mr::jobs {
namespace {

std::string_view Cut(std::string_view s, size_t n) { return s.size() > n ? s.substr(0, n) : s; }

}  // namespace

void CounterSet::Increment(std::string_view group, std::string_view name, int64_t amount) {
  if (group.empty() || name.empty() || group == kFrameworkGroup) return;
  group = Cut(group, kMaxCounterNameBytes);
  name = Cut(name, kMaxCounterNameBytes);
  std::lock_guard lock(mu_);
  auto g = values_.find(group);
  auto it = g != values_.end() ? g->second.find(name) : decltype(g->second.end()){};
  if (g == values_.end() || it == g->second.end()) {
    if (user_counters_ >= kMaxUserCounters) {
      ++dropped_;
      return;
    }
    ++user_counters_;
    if (g == values_.end()) g = values_.emplace(std::string(group), decltype(g->second){}).first;
    it = g->second.emplace(std::string(name), 0).first;
  }
  it->second = static_cast<int64_t>(static_cast<uint64_t>(it->second) + static_cast<uint64_t>(amount));
}

void CounterSet::SetStatus(std::string_view message) {
  std::lock_guard lock(mu_);
  status_.assign(Cut(message, kMaxStatusBytes));
}

void CounterSet::AddFramework(std::string_view name, int64_t amount) {
  std::lock_guard lock(mu_);
  auto& names = values_[kFrameworkGroup];
  auto it = names.find(name);
  if (it == names.end()) it = names.emplace(std::string(name), 0).first;
  it->second += amount;
}

std::vector<Counter> CounterSet::Values() const {
  std::lock_guard lock(mu_);
  std::vector<Counter> out;
  for (const auto& [group, names] : values_) {
    for (const auto& [name, value] : names) out.push_back({group, name, value});
  }
  return out;
}

std::string CounterSet::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

int64_t CounterSet::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

bool ParseReporterLine(std::string_view line, Counters* counters) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  constexpr std::string_view kCounter = "reporter:counter:", kStatus = "reporter:status:";
  if (line.starts_with(kStatus)) {
    counters->SetStatus(line.substr(kStatus.size()));
    return true;
  }
  if (!line.starts_with(kCounter)) return false;
  line.remove_prefix(kCounter.size());
  // GROUP,NAME,AMOUNT: the amount after the last comma, the group before
  // the first (Hadoop splits on ',' and wants exactly three fields).
  const size_t first = line.find(','), last = line.rfind(',');
  if (first == std::string_view::npos || first == last) return false;
  const std::string_view group = line.substr(0, first);
  const std::string_view name = line.substr(first + 1, last - first - 1);
  const std::string_view amount = line.substr(last + 1);
  if (name.find(',') != std::string_view::npos) return false;
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(amount.data(), amount.data() + amount.size(), n);
  if (ec != std::errc() || end != amount.data() + amount.size() || amount.empty()) return false;
  if (group.empty() || name.empty()) return false;
  counters->Increment(group, name, n);
  return true;
}

void ReporterLineSplitter::Feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (!skipping_) {
      if (partial_.size() + piece.size() > kMaxLineBytes) {
        skipping_ = true;
        partial_.clear();
      } else {
        partial_.append(piece);
      }
    }
    if (nl == std::string_view::npos) return;
    if (!skipping_ && partial_.starts_with("reporter:")) ParseReporterLine(partial_, counters_);
    partial_.clear();
    skipping_ = false;
    bytes.remove_prefix(nl + 1);
  }
}

void ReporterLineSplitter::Finish() {
  if (!skipping_ && partial_.starts_with("reporter:")) ParseReporterLine(partial_, counters_);
  partial_.clear();
  skipping_ = false;
}

}  // namespace mr::jobs
