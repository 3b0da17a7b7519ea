// NodeSpeeds: how fast each simulated node computes, over simulated time —
// a base factor per node (ClusterSpec::speeds) and episodes that set a
// node's factor for a while (RunSpec::episodes: a noisy neighbour, or a
// freeze at factor 0). The host (sim/host.h) asks it when a compute phase
// that starts at `start` with `work` ms of work at factor 1 ends (End), and
// how far an attempt has got (Fraction) when it reports progress.
//
// A factor f means f ms of work per ms: 0.25 takes 4 times as long, 0 makes
// no progress. The factor is piecewise constant: the node's base, or an
// episode's factor from its at_ms for for_ms (an episode replaces the base;
// a node's episodes do not overlap — the scenario parser checks it).
//
// Pure arithmetic: no clock, no randomness. Not thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "scheduler/cluster_state.h"

namespace mr::sim {

class NodeSpeeds {
 public:
  // `nodes` nodes at factor 1 with no episodes.
  explicit NodeSpeeds(size_t nodes = 0);

  // REQUIRES: factor > 0 (a node must end its work at its base speed).
  void SetBase(sched::NodeId node, double factor);
  // The node computes at `factor` in [at_ms, at_ms + for_ms). REQUIRES:
  // factor >= 0, for_ms > 0, no overlap with another episode of the node.
  void AddEpisode(sched::NodeId node, double at_ms, double for_ms, double factor);

  // Factor 1 at all times: End and Fraction are then the plain sums the
  // host used before speeds existed (bit for bit).
  bool Uniform(sched::NodeId node) const;
  double FactorAt(sched::NodeId node, double t) const;
  bool Frozen(sched::NodeId node, double t) const { return FactorAt(node, t) == 0; }
  // Work done in [from, to]: the integral of the factor (0 when to <= from).
  double Work(sched::NodeId node, double from, double to) const;
  // The time at which `work` ms of work (at factor 1) started at `start`
  // is done: start + work on a uniform node.
  double End(sched::NodeId node, double start, double work) const;
  // How much of the compute phase [from, end] is done at `now`, in [0, 1]
  // (1 when the phase is empty).
  double Fraction(sched::NodeId node, double from, double end, double now) const;
  // How much of an attempt is done at `now`, in [0, 1], when it reads from
  // `launch` to `from` (time on the links, which the node's speed does not
  // change) and then computes until `end`: (read time so far + work so
  // far) / (read time + work). (now - launch) / (end - launch) on a
  // uniform node.
  double Progress(sched::NodeId node, double launch, double from, double end, double now) const;

 private:
  struct Piece {
    double from;    // the piece runs from here to the next piece's `from`
    double factor;
  };
  struct Episode {
    double at, until, factor;
  };
  void Rebuild(sched::NodeId node);

  std::vector<double> base_;
  std::vector<std::vector<Episode>> episodes_;
  std::vector<std::vector<Piece>> pieces_;  // per node; pieces_[n][0].from = -infinity
};

}  // namespace mr::sim
