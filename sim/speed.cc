// NodeSpeeds: piecewise-constant speed factors (see speed.h).
#include "sim/speed.h"

#include <algorithm>
#include <limits>

namespace mr::sim {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

NodeSpeeds::NodeSpeeds(size_t nodes)
    : base_(nodes, 1.0), episodes_(nodes), pieces_(nodes, std::vector<Piece>{{-kInf, 1.0}}) {}

void NodeSpeeds::SetBase(sched::NodeId node, double factor) {
  base_[static_cast<size_t>(node)] = factor;
  Rebuild(node);
}

void NodeSpeeds::AddEpisode(sched::NodeId node, double at_ms, double for_ms, double factor) {
  auto& eps = episodes_[static_cast<size_t>(node)];
  eps.push_back(Episode{at_ms, at_ms + for_ms, factor});
  std::sort(eps.begin(), eps.end(), [](const Episode& a, const Episode& b) { return a.at < b.at; });
  Rebuild(node);
}

// Base, then each episode and the base again after it; an episode that
// starts where the previous one ends replaces the zero-length base piece.
void NodeSpeeds::Rebuild(sched::NodeId node) {
  const size_t n = static_cast<size_t>(node);
  std::vector<Piece>& p = pieces_[n];
  p.assign(1, Piece{-kInf, base_[n]});
  for (const Episode& e : episodes_[n]) {
    if (p.back().from == e.at) p.pop_back();
    p.push_back(Piece{e.at, e.factor});
    p.push_back(Piece{e.until, base_[n]});
  }
}

bool NodeSpeeds::Uniform(sched::NodeId node) const {
  const size_t n = static_cast<size_t>(node);
  return base_[n] == 1.0 && episodes_[n].empty();
}

double NodeSpeeds::FactorAt(sched::NodeId node, double t) const {
  const std::vector<Piece>& p = pieces_[static_cast<size_t>(node)];
  auto it = std::upper_bound(p.begin(), p.end(), t, [](double x, const Piece& q) { return x < q.from; });
  return std::prev(it)->factor;  // pieces_[n][0] starts at -infinity
}

double NodeSpeeds::Work(sched::NodeId node, double from, double to) const {
  if (!(to > from)) return 0;
  const std::vector<Piece>& p = pieces_[static_cast<size_t>(node)];
  double work = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double lo = std::max(from, p[i].from);
    const double hi = std::min(to, i + 1 < p.size() ? p[i + 1].from : kInf);
    if (hi > lo) work += p[i].factor * (hi - lo);
  }
  return work;
}

double NodeSpeeds::End(sched::NodeId node, double start, double work) const {
  if (Uniform(node)) return start + work;
  if (!(work > 0)) return start;
  const std::vector<Piece>& p = pieces_[static_cast<size_t>(node)];
  size_t i = static_cast<size_t>(
      std::upper_bound(p.begin(), p.end(), start, [](double x, const Piece& q) { return x < q.from; }) -
      p.begin() - 1);
  double t = start;
  for (;; ++i) {
    const double f = p[i].factor;
    const double until = i + 1 < p.size() ? p[i + 1].from : kInf;
    if (f > 0 && t + work / f <= until) return t + work / f;
    work -= f * (until - t);  // the last piece is the base (> 0): the loop ends there
    t = until;
    if (!(work > 0)) return t;  // rounding: the work ran out at the piece's end
  }
}

double NodeSpeeds::Fraction(sched::NodeId node, double from, double end, double now) const {
  if (Uniform(node)) {
    const double span = end - from;
    return span <= 0 ? 1.0 : std::clamp((now - from) / span, 0.0, 1.0);
  }
  const double total = Work(node, from, end);
  return total <= 0 ? 1.0 : std::clamp(Work(node, from, now) / total, 0.0, 1.0);
}

double NodeSpeeds::Progress(sched::NodeId node, double launch, double from, double end,
                            double now) const {
  const double read = std::max(0.0, from - launch);
  const double total = read + Work(node, from, end);
  if (total <= 0) return 1.0;
  const double done = std::clamp(now - launch, 0.0, read) + Work(node, from, std::min(now, end));
  return std::clamp(done / total, 0.0, 1.0);
}

}  // namespace mr::sim
