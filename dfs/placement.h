// Replica placement policies: where the replicas of a new block go.
//
// Start here for placement. The master calls Choose() once per block, on its
// single RPC thread; policies keep no locks. Randomness comes from the
// generator handed in, so a seeded master places blocks reproducibly.
//
// Policies (selected by `dfs.placement` in the cluster file):
//   random  uniformly random distinct live nodes.
//   hdfs    HDFS's default: first replica on the writer's node when the writer
//           is a worker, else on a random node of the writer's datacenter when
//           that is known, else a random node; second in a different datacenter
//           (or, when racks are configured, a different rack); third on
//           another node beside the second (same datacenter/rack); any further
//           replicas random.
//   spread  round-robin over datacenters: replica i goes to the i-th
//           datacenter after a rotating start, a random node within it.
//   skewed  hot spots (Pandas §III, §VII-A2): a fraction `hot_node_fraction`
//           of the nodes (fixed per cluster: the first ones in node-id order)
//           receives a fraction `hot_block_fraction` of the replicas.
//
// A request may pin the first replica to a datacenter (`datacenter`: `dfs put
// --datacenter`, the JoSS setting of a job's input uploaded from one
// datacenter). Every policy honours it: replica 1 goes to an eligible node
// there (the writer, if it is one), and the other replicas follow the
// policy's own rules as if replica 1 had been its own choice. With no
// eligible node there, the pin is ignored for that block.
//
// Every policy returns distinct nodes, only live nodes with room, and never a
// node in `exclude`. If fewer eligible nodes exist than requested, it returns
// as many as there are (at least one, else Unavailable).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/status.h"

namespace mr::dfs {

// A candidate node as the master sees it.
struct PlacementNode {
  std::string id;
  std::string datacenter;
  std::string rack;           // empty when racks are not configured
  int64_t free_bytes = -1;    // -1 = unlimited
};

struct PlacementRequest {
  int replication = 1;
  int64_t block_bytes = 0;              // nodes with free_bytes < this are skipped
  std::optional<std::string> writer;    // the writing worker's id, if a worker writes
  std::vector<std::string> exclude;     // e.g. nodes that failed in this pipeline
  // The writer's datacenter when its node is not a worker (a client that
  // says where it runs): `hdfs` puts replica 1 there when `writer` is not
  // eligible. The other policies ignore it.
  std::optional<std::string> writer_datacenter;
  // Replica 1 in this datacenter, under every policy (see above).
  std::optional<std::string> datacenter;
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual const char* name() const = 0;
  // Chooses distinct nodes from `nodes` (all live). The order is the pipeline
  // order: the writer streams to the first, which forwards to the second, ...
  virtual Result<std::vector<std::string>> Choose(const PlacementRequest& request,
                                                  const std::vector<PlacementNode>& nodes,
                                                  std::mt19937_64& rng) = 0;
};

struct PlacementParams {
  double hot_node_fraction = 0.2;   // skewed only
  double hot_block_fraction = 0.8;  // skewed only
};

// Makes a policy by name. InvalidArgument for an unknown name (the message
// lists the valid ones) or parameters out of range (fractions in (0, 1]).
Result<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(const std::string& name,
                                                             const PlacementParams& params);

// The valid names, for error messages and docs.
std::vector<std::string> PlacementPolicyNames();

}  // namespace mr::dfs
