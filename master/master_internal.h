// Private state of the Master, shared by its .cc files (master.cc:
// membership, replicas, replication; dfs_service.cc: the dfs.* handlers).
// Not part of the master's interface.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "master/master.h"
#include "master/replica_list.h"

namespace mr::master {

struct Master::WorkerState {
  pb::WorkerInfo info;
  bool live = false;
  Steady::time_point last_heartbeat;
  int64_t used_bytes = 0;
  NodeNum number = 0;                   // NodeNumber(info.id()), in ReplicaLists
  // The blocks it holds (a good or a corrupt copy). The blocks themselves
  // are found by a pass over the block map (MarkDead, CheckDecommissions):
  // a set per worker would cost ~50 bytes a block (issue 29).
  int64_t block_count = 0;
  std::vector<uint64_t> pending_deletes;
  std::vector<pb::TransferCommand> pending_transfers;
  int64_t free_bytes = -1;              // from its last heartbeat
  std::string disk_problem;             // from its last heartbeat; non-empty: place nothing here
  std::vector<pb::RepairCommand> pending_repairs;
  // "" (in service), "decommissioning" or "decommissioned" (persisted).
  std::string admin_state;
  // Declared dead by CheckLiveness, until it registers again: listed in
  // dead_members, so the others let go of their transfers to it.
  bool declared_dead = false;
  // Registered with a report that continues (cluster.BlockReport), and its
  // last part is not in yet: ReportsUnderway().
  bool reporting = false;
  // The membership_version_ of this entry's latest change: its key in
  // member_changes_ (0 before its first).
  uint64_t member_version = 0;
};

// The nodes one pass of ScheduleReplication may copy to (LiveNodes), each
// with its room less the copies in flight to it (a worker with room for two
// blocks must not be sent three at once), found by id in O(1). Made on the
// first copy a pass orders: most passes order none (the blocks they visit
// wait for a copy in flight), and with thousands of workers the list, and
// a walk of it per copy in flight, held the master's thread for
// milliseconds a pass (issue 29).
class Master::CopyTargets {
 public:
  explicit CopyTargets(const Master& master) : master_(master) {}
  std::vector<dfs::PlacementNode>& Nodes();
  // Takes `bytes` off `node`'s room; a node of unlimited room (-1), or one
  // not among them, is left as it is.
  void Reserve(std::string_view node, int64_t bytes);

 private:
  const Master& master_;
  bool made_ = false;
  std::vector<dfs::PlacementNode> nodes_;
  absl::flat_hash_map<std::string_view, size_t> index_;  // id → its place in nodes_
};

// One per block the master knows: millions, so kept small (issue 29):
// worker ids as 16-bit numbers (replica_list.h), 24 bytes in a flat hash
// map. What only a troubled block needs (corrupt copies, a copy in flight,
// retry times) lives in BlockTrouble, in a side map of those few blocks.
struct Master::BlockState {
  int64_t bytes = 0;
  ReplicaList replicas;                 // live nodes holding a good copy
  int16_t replication = 1;
  bool complete = false;                // part of a file in the namespace
  bool troubled = false;                // has an entry in troubled_
};

// The state of a block being copied or repaired (troubled_): created when a
// copy is ordered or a corrupt copy noted, dropped once idle (TroubleIdle).
struct Master::BlockTrouble {
  static constexpr uint32_t kNoCopy = UINT32_MAX;
  // Live nodes holding a quarantined copy (a bad chunk): never counted as
  // good, kept as a source of last resort, repaired in place, and deleted
  // only once `replication` good copies exist (replica_repair.cc).
  ReplicaList corrupt;
  Steady::time_point replication_retry;  // no new copy ordered before this
  Steady::time_point repair_retry;       // no new repair ordered before this
  // The last copy ordered (its NodeNumber), while still under-replicated.
  uint32_t copy_target = kNoCopy;
  int16_t repair_rounds = 0;            // repairs ordered since `corrupt` was last empty
};

struct Master::Lease {
  std::string path;
  std::string client_id;                // the DfsClient that opened it
  pb::INode inode;                      // blocks so far, in file order
  bool overwrite = false;
  std::string writer;                   // worker id, or empty
  std::string writer_datacenter;        // a non-worker writer's datacenter, or empty
  std::string datacenter;               // replica 1 pinned here (dfs put --datacenter), or empty
  std::vector<uint64_t> uncommitted;    // allocated, not yet completed
  Steady::time_point last_activity;
};

// Lease ids: the master's epoch in the top bits, a per-run counter below.
constexpr int kLeaseCounterBits = 40;

}  // namespace mr::master
