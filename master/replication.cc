// Re-replication on the Master (docs/dfs.md): blocks with fewer live replicas
// than their file asks for are copied from a live holder to nodes the
// placement policy picks; copies that do not arrive are ordered again; a
// block with more replicas than it needs loses the extras.
#include "master/master.h"

#include <algorithm>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "master/master_internal.h"

namespace mr::master {
std::vector<dfs::PlacementNode>& Master::CopyTargets::Nodes() {
  if (made_) return nodes_;
  made_ = true;
  nodes_ = master_.LiveNodes();
  index_.reserve(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) index_.emplace(nodes_[i].id, i);
  for (const auto& [id, t] : master_.troubled_) {
    if (t.copy_target == BlockTrouble::kNoCopy) continue;
    Reserve(NodeName(t.copy_target), master_.blocks_.at(id).bytes);
  }
  return nodes_;
}

void Master::CopyTargets::Reserve(std::string_view node, int64_t bytes) {
  auto it = index_.find(node);
  if (it == index_.end()) return;
  int64_t& room = nodes_[it->second].free_bytes;
  if (room >= 0) room = std::max<int64_t>(0, room - bytes);
}

// Orders copies of blocks that have fewer live replicas than their file asks
// for, from a live replica to nodes chosen by the placement policy, and
// trims surplus ones: among the blocks in attention_ and troubled_ only
// (every block after a start or a change of draining).
void Master::ScheduleReplication() {
  const auto now = Now();
  // Right after a start, workers are still sending their block reports: a
  // block may look under-replicated only because its holders have not
  // registered yet. Wait as long as it takes to declare a worker dead, and
  // while a registered worker's report is still arriving in parts.
  const auto grace = std::chrono::milliseconds(int64_t{config_.cluster.heartbeat_interval_ms} *
                                               config_.cluster.dead_after_missed_heartbeats);
  if (now - started_ < grace || ReportsUnderway()) return;
  if (review_all_) {
    for (const auto& [id, b] : blocks_) {
      if (NeedsAttention(id, b)) attention_.insert(id);
    }
    review_all_ = false;
  }
  CopyTargets nodes(*this);
  // A copy of the ids, troubled ones first (they are few, and a cut pass
  // must not starve them): reviewing a block may Attend it again (a trim
  // removes replicas) or drop its trouble.
  std::vector<uint64_t> ids;
  ids.reserve(troubled_.size() + attention_.size());
  for (const auto& [id, t] : troubled_) ids.push_back(id);
  for (uint64_t id : attention_) {
    if (!troubled_.contains(id)) ids.push_back(id);
  }
  // A placement among thousands of nodes costs tens of microseconds, and
  // the master's one thread answers nobody meanwhile: when many blocks fall
  // short at once (a worker with 100,000 blocks died), copies are ordered
  // for kReplicationBudget of each pass and the rest wait in attention_ for
  // the next (HDFS bounds its replication monitor's work per iteration the
  // same way, by blocks: dfs.namenode.replication.work.multiplier.per.iteration).
  const auto deadline = std::chrono::steady_clock::now() + kReplicationBudget;
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint64_t id = ids[i];
    if (std::chrono::steady_clock::now() > deadline) {
      spdlog::info("re-replication: {} blocks wait for the next pass ({} ms of the master's thread "
                   "per pass)",
                   ids.size() - i, kReplicationBudget.count());
      break;
    }
    auto it = blocks_.find(id);
    if (it == blocks_.end() || !ReviewBlock(id, it->second, nodes, now)) attention_.erase(id);
  }
}

void Master::ForEachUnderReplicated(const std::function<bool(uint64_t, const BlockState&)>& fn) const {
  auto visit = [&](uint64_t id, const BlockState& b) {
    return !b.complete || InService(b) >= b.replication || fn(id, b);
  };
  if (review_all_) {
    for (const auto& [id, b] : blocks_) {
      if (!visit(id, b)) return;
    }
    return;
  }
  for (uint64_t id : attention_) {
    auto it = blocks_.find(id);
    if (it != blocks_.end() && !visit(id, it->second)) return;
  }
  for (const auto& [id, t] : troubled_) {
    if (!attention_.contains(id) && !visit(id, blocks_.at(id))) return;
  }
}

Master::BlockCounts Master::CountBlocks() {
  const size_t walk = review_all_ ? blocks_.size() : attention_.size() + troubled_.size();
  const auto now = std::chrono::steady_clock::now();
  const auto interval = std::max<std::chrono::steady_clock::duration>(
      std::chrono::milliseconds(config_.cluster.heartbeat_interval_ms), 10 * under_count_took_);
  if (walk <= kExactCountWalk || now - under_counted_at_ >= interval) {
    under_counted_ = 0;
    ForEachUnderReplicated([&](uint64_t, const BlockState&) {
      ++under_counted_;
      return true;
    });
    under_counted_at_ = std::chrono::steady_clock::now();
    under_count_took_ = under_counted_at_ - now;
  }
  return {complete_blocks_, under_counted_};
}

bool Master::NeedsAttention(uint64_t id, const BlockState& b) const {
  if (!b.complete) return false;  // CompleteFile attends it
  return CountedReplicas(id, b) < b.replication || InService(b) > b.replication;
}

bool Master::ReviewBlock(uint64_t id, BlockState& b, CopyTargets& nodes, Steady::time_point now) {
  // Surplus copies of blocks a running job reads stay until it ends (the
  // Joint Scheduler prefetches them on purpose).
  if (b.complete && static_cast<int>(b.replicas.size()) > b.replication && !jobs_->IsActiveInput(id)) {
    TrimReplicas(id, b);
  }
  const int counted = CountedReplicas(id, b);
  if (BlockTrouble* t = FindTrouble(id, b)) {
    // Enough copies, or the ordered copy landed though the block is still
    // short (fewer live workers than its replication): not a failed copy.
    if (counted >= b.replication ||
        (t->copy_target != BlockTrouble::kNoCopy &&
         b.replicas.ContainsNumber(static_cast<NodeNum>(t->copy_target)))) {
      t->copy_target = BlockTrouble::kNoCopy;
    }
    if (!b.complete || b.replicas.empty() || counted >= b.replication || now < t->replication_retry) {
      DropTroubleIfIdle(id, b, now);
      return NeedsAttention(id, b);
    }
    if (t->copy_target != BlockTrouble::kNoCopy) CopyFailed(id, *t, now);
  } else if (!b.complete || b.replicas.empty() || counted >= b.replication) {
    return NeedsAttention(id, b);
  }
  OrderCopy(id, b, counted, nodes, now);
  return true;  // until the copy lands
}

// Asks a holder of `id` to copy it to nodes the placement policy picks
// among `nodes` (their room less the copies in flight), restoring
// datacenter spread first.
void Master::OrderCopy(uint64_t id, BlockState& b, int counted, CopyTargets& nodes,
                       Steady::time_point now) {
  dfs::PlacementRequest req;
  req.replication = b.replication - counted;
  req.block_bytes = b.bytes;
  req.exclude = b.replicas.Names();
  const ReplicaList& corrupt = Corrupt(id, b);
  req.exclude.insert(req.exclude.end(), corrupt.begin(), corrupt.end());
  // Offer only nodes in datacenters that hold no copy yet, when there are
  // any; then let the policy choose.
  std::set<std::string> covered;
  for (const auto& r : b.replicas) {
    if (!Draining(r)) covered.insert(workers_.at(r)->info.datacenter());
  }
  std::vector<dfs::PlacementNode> elsewhere;
  for (const auto& n : nodes.Nodes()) {
    if (!covered.count(n.datacenter)) elsewhere.push_back(n);
  }
  auto targets = placement_->Choose(req, elsewhere, rng_);
  if (!targets.ok()) targets = placement_->Choose(req, nodes.Nodes(), rng_);
  if (!targets.ok()) return;  // nowhere to copy to; try again next tick
  pb::TransferCommand cmd;
  cmd.set_block_id(id);
  for (const auto& t : *targets) *cmd.add_targets() = Location(t);
  workers_.at(b.replicas.front())->pending_transfers.push_back(std::move(cmd));
  BlockTrouble& trouble = Trouble(id, b);
  trouble.copy_target = NodeNumber((*targets)[0]);
  for (const std::string& t : *targets) nodes.Reserve(t, b.bytes);
  // If the copy fails (a target dies, say), order another after a while.
  trouble.replication_retry =
      now + std::chrono::milliseconds(std::max<int64_t>(10 * int64_t{config_.cluster.heartbeat_interval_ms}, 5000));
  spdlog::info("block {} has {}/{} replicas: copying from {} to {}", id, b.replicas.size(),
               b.replication, b.replicas.front(), (*targets)[0]);
}

// A copy ScheduleReplication ordered did not arrive by the retry time (the
// target failed to store it, or died, or the source did). Logged at most
// once per kCopyFailureLogMs, counting the ones in between.
void Master::CopyFailed(uint64_t id, const BlockTrouble& t, Steady::time_point now) {
  constexpr int64_t kCopyFailureLogMs = 10000;
  ++copy_failures_unlogged_;
  if (now - copy_failure_logged_ < std::chrono::milliseconds(kCopyFailureLogMs)) return;
  spdlog::warn("block {}: the copy ordered to {} did not arrive ({} failed copies since the last "
               "such report); ordering another",
               id, NodeName(static_cast<NodeNum>(t.copy_target)), copy_failures_unlogged_);
  copy_failure_logged_ = now;
  copy_failures_unlogged_ = 0;
}

// A block with more replicas than asked (a worker came back after its
// blocks were copied elsewhere): delete the surplus from the datacenter that
// holds the most copies, so the survivors stay spread out.
void Master::TrimReplicas(uint64_t id, BlockState& b) {
  // Copies on decommissioning workers neither count nor go: they leave
  // with their worker.
  auto in_service = [&] {
    std::vector<std::string> v;
    for (const auto& n : b.replicas) {
      if (!Draining(n)) v.push_back(n);
    }
    return v;
  };
  for (auto kept = in_service(); static_cast<int>(kept.size()) > b.replication; kept = in_service()) {
    std::map<std::string, int> per_dc;
    for (const auto& n : kept) ++per_dc[workers_.at(n)->info.datacenter()];
    auto victim = std::max_element(kept.begin(), kept.end(), [&](const auto& x, const auto& y) {
      const int dx = per_dc[workers_.at(x)->info.datacenter()];
      const int dy = per_dc[workers_.at(y)->info.datacenter()];
      return dx != dy ? dx < dy : x < y;
    });
    const std::string node = *victim;
    RemoveReplica(id, node);
    workers_.at(node)->pending_deletes.push_back(id);
    spdlog::info("block {} has {} replicas, {} asked: deleting the one on {}", id,
                 kept.size(), b.replication, node);
  }
}

}  // namespace mr::master
