// The block map on the Master: which live workers hold which block (soft
// state, rebuilt from block reports after a restart), kept small for
// 10,000,000 blocks (issue 29, docs/benchmarks.md "The namespace with a
// 24-byte block state" and "The namespace at 100,000 files"):
//   - blocks_: per block a 24-byte BlockState (size, replicas as 16-bit
//     worker numbers, replication, complete);
//   - troubled_: the few blocks being copied or repaired, with what only
//     they need (corrupt copies, the copy ordered, retry times, repair
//     rounds), dropped once idle;
//   - per worker only a count of the blocks it holds: what a dead or
//     restarted worker held is found by one pass over blocks_ (MarkDead),
//     as CheckDecommissions finds a draining worker's blocks. HDFS threads
//     a per-datanode list through its BlocksMap's triplets instead; a pass
//     costs O(blocks) once per death, not bytes on every block.
#include <spdlog/spdlog.h>

#include "master/master.h"
#include "master/master_internal.h"

namespace mr::master {

Master::BlockTrouble& Master::Trouble(uint64_t id, BlockState& b) {
  static_assert(sizeof(BlockState) <= 24, "a BlockState is in every block's slot");
  b.troubled = true;
  return troubled_[id];
}

const Master::BlockTrouble* Master::FindTrouble(uint64_t id, const BlockState& b) const {
  if (!b.troubled) return nullptr;
  auto it = troubled_.find(id);
  return it == troubled_.end() ? nullptr : &it->second;
}

Master::BlockTrouble* Master::FindTrouble(uint64_t id, const BlockState& b) {
  if (!b.troubled) return nullptr;
  auto it = troubled_.find(id);
  return it == troubled_.end() ? nullptr : &it->second;
}

const ReplicaList& Master::Corrupt(uint64_t id, const BlockState& b) const {
  static const ReplicaList kNone;
  const BlockTrouble* t = FindTrouble(id, b);
  return t ? t->corrupt : kNone;
}

// Idle: every field as a missing entry reads (no corrupt copy, no copy in
// flight, no repair round, both retry times past).
void Master::DropTroubleIfIdle(uint64_t id, BlockState& b, Steady::time_point now) {
  const BlockTrouble* t = FindTrouble(id, b);
  if (t == nullptr) {
    b.troubled = false;
    return;
  }
  if (!t->corrupt.empty() || t->copy_target != BlockTrouble::kNoCopy || t->repair_rounds != 0 ||
      now < t->replication_retry || now < t->repair_retry) {
    return;
  }
  troubled_.erase(id);
  b.troubled = false;
}

bool Master::DrainingNumber(NodeNum n) const { return n < draining_.size() && draining_[n]; }

void Master::NoteAdminState(const WorkerState& w) {
  if (draining_.size() <= w.number) draining_.resize(w.number + 1u, false);
  const bool draining = !w.admin_state.empty();
  if (draining_[w.number] != draining) ReviewAll();  // its copies count, or stop counting
  draining_[w.number] = draining;
}

int Master::InService(const BlockState& b) const {
  int n = 0;
  for (size_t i = 0; i < b.replicas.size(); ++i) n += !DrainingNumber(b.replicas.numbers()[i]);
  return n;
}

void Master::AddReplica(uint64_t block, BlockState& b, WorkerState& w) {
  bool was_corrupt = false;
  if (BlockTrouble* t = FindTrouble(block, b)) {
    was_corrupt = t->corrupt.RemoveNumber(w.number);
    if (t->corrupt.empty()) t->repair_rounds = 0;
  }
  if (b.replicas.ContainsNumber(w.number)) return;
  b.replicas.PushNumber(w.number);
  if (!was_corrupt) ++w.block_count;
  // A gained replica can only make a surplus (and a block report adds
  // millions: attend to no others).
  if (b.complete && static_cast<int>(b.replicas.size()) > b.replication) Attend(block);
  // Only a running job's input needs to hear (and a block report is
  // millions of calls: skip the JobTracker's lookups for the rest).
  if (jobs_->IsActiveInput(block)) jobs_->ReplicaAdded(block, w.info.id());
}

void Master::RemoveReplica(uint64_t block, const std::string& node) {
  auto w = workers_.find(node);
  auto it = blocks_.find(block);
  if (w == workers_.end() || it == blocks_.end()) return;
  const NodeNum n = w->second->number;
  bool removed = it->second.replicas.RemoveNumber(n);
  if (BlockTrouble* t = FindTrouble(block, it->second)) removed |= t->corrupt.RemoveNumber(n);
  w->second->block_count -= removed;
  if (removed) Attend(block);
}

// Drops blocks from the map and tells their holders to delete them.
void Master::ForgetBlocks(const std::vector<uint64_t>& ids) {
  for (uint64_t id : ids) {
    auto it = blocks_.find(id);
    if (it == blocks_.end()) continue;
    std::vector<std::string> holders = it->second.replicas.Names();
    if (const BlockTrouble* t = FindTrouble(id, it->second)) {
      holders.insert(holders.end(), t->corrupt.begin(), t->corrupt.end());
      troubled_.erase(id);
    }
    attention_.erase(id);
    complete_blocks_ -= it->second.complete;
    for (const auto& node : holders) {
      WorkerState& w = *workers_.at(node);
      --w.block_count;
      w.pending_deletes.push_back(id);
    }
    blocks_.erase(it);
  }
}

void Master::MarkDead(const std::vector<WorkerState*>& dead) {
  std::vector<NodeNum> numbers;
  for (const WorkerState* w : dead) numbers.push_back(w->number);
  for (auto& [id, b] : blocks_) {
    BlockTrouble* t = FindTrouble(id, b);
    bool lost = false;
    for (NodeNum n : numbers) {
      lost |= b.replicas.RemoveNumber(n);
      if (t) t->corrupt.RemoveNumber(n);
    }
    if (lost && b.complete) Attend(id);
  }
  for (WorkerState* w : dead) {
    w->block_count = 0;
    w->pending_deletes.clear();
    w->pending_transfers.clear();
    w->pending_repairs.clear();
    w->live = false;
    if (w->number < heard_ms_.size()) heard_ms_[w->number] = kNotLive;
    SetReporting(*w, false);
    jobs_->WorkerLost(w->info.id());
  }
}

}  // namespace mr::master
