// Speculation and node speeds in a scenario file (docs/simulator.md,
// "Speculation and slow nodes"):
//
//   [speculation]                  # every [[schedulers]] row's speculator
//   name = "late"                  # none | hadoop | late (Default: none)
//   params = { cap = 0.1 }         # its parameters (mrctl schedulers lists them)
//
//   [[schedulers]]
//   name = "fair"
//   speculation = { name = "hadoop" }   # this row's own (replaces [speculation])
//
//   [[cluster.speeds]]             # a group of nodes at a speed factor
//   fraction = 0.1                 # 10 % of the nodes, drawn from the seed ("speeds" stream)
//   # nodes = [3, 17]              # or these nodes
//   factor = 0.25                  # a task's compute takes 4 times as long there
//
//   [[run.episodes]]               # a noisy neighbour or a freeze
//   node = 12
//   at_ms = 60000
//   for_ms = 120000
//   factor = 0                     # 0 = frozen: no progress, no heartbeats
#include "sim/scenario_speculation.h"

#include "scheduler/speculator.h"

namespace mr::sim {

using scenario_internal::Invalid;
using scenario_internal::Reader;

Status ReadParams(const Reader& parent, sched::SchedulerParams* params) {
  Reader r(nullptr, "");
  MR_RETURN_IF_ERROR(parent.Sub("params", &r));
  const toml::node* t = parent.Get("params");
  if (t == nullptr) return Status::OK();
  for (const auto& [key, node] : *t->as_table()) {
    const std::string k(key.str());
    if (node.is_boolean()) (*params)[k] = node.as_boolean()->get();
    else if (node.is_integer()) (*params)[k] = node.as_integer()->get();
    else if (node.is_floating_point()) (*params)[k] = node.as_floating_point()->get();
    else if (node.is_string()) (*params)[k] = node.as_string()->get();
    else return Invalid(r.Name(k) + " must be a boolean, integer, float or string");
  }
  return Status::OK();
}

Status ReadSpeeds(const Reader& cluster, ClusterSpec* c) {
  std::vector<Reader> groups;
  MR_RETURN_IF_ERROR(cluster.Tables("speeds", &groups));
  for (const Reader& g : groups) {
    SpeedGroup group;
    MR_RETURN_IF_ERROR(g.Keys({"nodes", "fraction", "factor"}));
    if (g.Get("factor") == nullptr) return Invalid(g.Name("factor") + " is required");
    MR_RETURN_IF_ERROR(g.Double("factor", 1e-6, 100, &group.factor));
    MR_RETURN_IF_ERROR(g.Double("fraction", 0, 1, &group.fraction));
    if (const toml::node* nodes = g.Get("nodes")) {
      const std::string what = g.Name("nodes") + " must be an array of node indexes in [0, " +
                               std::to_string(c->nodes - 1) + "]";
      if (!nodes->is_array()) return Invalid(what);
      for (const toml::node& e : *nodes->as_array()) {
        if (!e.is_integer() || e.as_integer()->get() < 0 || e.as_integer()->get() >= c->nodes) {
          return Invalid(what);
        }
        group.nodes.push_back(static_cast<int>(e.as_integer()->get()));
      }
    }
    if (group.nodes.empty() == (g.Get("fraction") == nullptr)) {
      return Invalid(g.path() + ": give exactly one of nodes (non-empty) and fraction");
    }
    c->speeds.push_back(std::move(group));
  }
  return Status::OK();
}

Status ReadEpisodes(const Reader& run, const ClusterSpec& c, RunSpec* r) {
  std::vector<Reader> episodes;
  MR_RETURN_IF_ERROR(run.Tables("episodes", &episodes));
  for (const Reader& e : episodes) {
    SpeedEpisode ep;
    MR_RETURN_IF_ERROR(e.Keys({"node", "at_ms", "for_ms", "factor"}));
    for (const char* key : {"node", "for_ms", "factor"}) {
      if (e.Get(key) == nullptr) return Invalid(e.Name(key) + " is required");
    }
    MR_RETURN_IF_ERROR(e.Int("node", 0, c.nodes - 1, &ep.node));
    MR_RETURN_IF_ERROR(e.Int("at_ms", 0, INT64_MAX / 4, &ep.at_ms));
    MR_RETURN_IF_ERROR(e.Int("for_ms", 1, INT64_MAX / 4, &ep.for_ms));
    MR_RETURN_IF_ERROR(e.Double("factor", 0, 100, &ep.factor));
    for (const SpeedEpisode& o : r->episodes) {
      if (o.node == ep.node && ep.at_ms < o.at_ms + o.for_ms && o.at_ms < ep.at_ms + ep.for_ms) {
        return Invalid(e.path() + ": overlaps an earlier episode of node " + std::to_string(ep.node));
      }
    }
    r->episodes.push_back(ep);
  }
  return Status::OK();
}

Status ReadSpeculation(const Reader& r, SpeculationSpec* s) {
  MR_RETURN_IF_ERROR(r.Keys({"name", "params"}));
  MR_RETURN_IF_ERROR(r.String("name", &s->name));
  MR_RETURN_IF_ERROR(ReadParams(r, &s->params));
  auto made = sched::MakeSpeculator(s->name, s->params);
  if (!made.ok()) return Invalid("'" + r.path() + "': " + made.status().message());
  return Status::OK();
}

}  // namespace mr::sim
