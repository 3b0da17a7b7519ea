// Figures derived from a RunResult (see metrics.h).
#include "sim/metrics.h"

#include <algorithm>
#include <cmath>

namespace mr::sim {

double Rate(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

double InterDcBytes(const Tally& t) {
  const int off = static_cast<int>(Span::kOffDatacenter);
  return (t.input_mb[off] + t.prefetch_mb[off] + t.shuffle_mb[off]) * 1048576.0;
}

double ReduceDataLocality(const Tally& t) {
  double all = 0;
  for (double mb : t.shuffle_mb) all += mb;
  const double off = t.shuffle_mb[static_cast<int>(Span::kOffDatacenter)];
  return all > 0 ? (all - off) / all : 0.0;
}

double MeanJtt(const Tally& t) { return t.jobs > 0 ? t.jtt_ms_sum / static_cast<double>(t.jobs) : 0; }

namespace {

// Samples with t in [from, to].
std::vector<const BacklogSample*> Window(const RunResult& r, double from, double to) {
  std::vector<const BacklogSample*> out;
  for (const BacklogSample& s : r.backlog) {
    if (s.t_ms >= from && s.t_ms <= to) out.push_back(&s);
  }
  return out;
}

double Backlog(const BacklogSample& s) { return static_cast<double>(s.maps_waiting + s.maps_running); }

}  // namespace

double BacklogTail(const RunResult& r) {
  if (r.backlog.empty()) return 0;
  const double end = static_cast<double>(r.backlog.back().t_ms);
  auto w = Window(r, end * (1.0 - r.tail_fraction), end);
  double sum = 0;
  for (const BacklogSample* s : w) sum += Backlog(*s);
  return w.empty() ? 0 : sum / static_cast<double>(w.size());
}

double BacklogSlope(const RunResult& r) {
  if (r.backlog.size() < 4) return 0;
  const double end = static_cast<double>(r.backlog.back().t_ms);
  auto w = Window(r, end / 2, end);
  if (w.size() < 2) return 0;
  double mt = 0, mb = 0;
  for (const BacklogSample* s : w) mt += static_cast<double>(s->t_ms), mb += Backlog(*s);
  mt /= static_cast<double>(w.size());
  mb /= static_cast<double>(w.size());
  double num = 0, den = 0;
  for (const BacklogSample* s : w) {
    const double dt = static_cast<double>(s->t_ms) - mt;
    num += dt * (Backlog(*s) - mb);
    den += dt * dt;
  }
  return den > 0 ? num / den * 1000.0 : 0;
}

std::pair<double, double> NodeLoad(const RunResult& r) {
  if (r.node_maps.empty()) return {0, 0};
  double mean = 0;
  for (int64_t m : r.node_maps) mean += static_cast<double>(m);
  mean /= static_cast<double>(r.node_maps.size());
  double var = 0;
  for (int64_t m : r.node_maps) var += (static_cast<double>(m) - mean) * (static_cast<double>(m) - mean);
  return {mean, std::sqrt(var / static_cast<double>(r.node_maps.size()))};
}

std::vector<double> SortedJtts(const RunResult& r) {
  std::vector<double> out;
  for (const JobRecord& j : r.jobs) {
    if (j.finish_ms >= 0) out.push_back(static_cast<double>(j.finish_ms - j.submit_ms));
  }
  std::sort(out.begin(), out.end());
  return out;
}

int64_t Wtt(const RunResult& r) {
  int64_t first = -1, last = -1;
  for (const JobRecord& j : r.jobs) {
    if (first < 0 || j.submit_ms < first) first = j.submit_ms;
    last = std::max(last, j.finish_ms);
  }
  return first < 0 || last < 0 ? 0 : last - first;
}

}  // namespace mr::sim
