// Corrupt replicas on the Master (docs/dfs.md, "A replica is corrupt").
//
// A replica with a bad chunk, reported by a reader (dfs.BadReplica) or by
// its worker (quarantined in a heartbeat or block report), moves from the
// block's good replicas to `corrupt`. It is never deleted while the block
// has fewer good copies than its replication: its other chunks may be the
// only good copy of some bytes. Instead, every retry interval, each holder
// of a corrupt copy is sent a RepairCommand: it fetches the block chunk by
// chunk from every other replica (good ones first) and its own, and its new
// copy replaces the quarantined one; it then reports the block as received
// and it counts as good again. Once the block has `replication` good copies,
// the corrupt ones still left are deleted.
//
// Rounds are max(10 × heartbeat_interval_ms, 5 s) apart, doubling each
// round up to 64 times that. While repairs are in their first kRepairRounds
// rounds, a corrupt copy
// counts toward the replication (its repair is under way), so re-replication
// does not copy the block elsewhere too; after that, re-replication from a
// good holder restores the count on other nodes.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "master/master.h"
#include "master/master_internal.h"

namespace mr::master {
namespace {

constexpr int kRepairRounds = 3;

}  // namespace

// Copies on decommissioning workers do not count (membership.cc): the
// block is copied elsewhere as if they were gone.
int Master::CountedReplicas(uint64_t id, const BlockState& b) const {
  int counted = InService(b);
  const BlockTrouble* t = FindTrouble(id, b);
  if (t != nullptr && t->repair_rounds < kRepairRounds) {
    for (size_t i = 0; i < t->corrupt.size(); ++i) counted += !DrainingNumber(t->corrupt.numbers()[i]);
  }
  return counted;
}

// Called by BadReplica, Register and Heartbeat.
void Master::NoteCorrupt(uint64_t block, const std::string& node, const std::string& why) {
  auto it = blocks_.find(block);
  auto w = workers_.find(node);
  if (it == blocks_.end() || w == workers_.end() || !w->second->live) return;
  BlockState& b = it->second;
  WorkerState& holder = *w->second;
  const bool was_good = b.replicas.RemoveNumber(holder.number);
  Attend(block);
  BlockTrouble& t = Trouble(block, b);
  if (t.corrupt.ContainsNumber(holder.number)) return;
  t.corrupt.PushNumber(holder.number);
  if (!was_good) ++holder.block_count;
  spdlog::warn("replica of block {} on {} is corrupt ({}): kept as a source of last resort; "
               "{} good replica(s) left",
               block, node, why, b.replicas.size());
}

// Every heartbeat interval (Tick), before ScheduleReplication. Only blocks
// with a corrupt copy have one: the troubled ones.
void Master::ScheduleRepairs() {
  const auto now = Now();
  // As for re-replication: right after a start, sources may not have
  // registered yet.
  const auto interval = std::chrono::milliseconds(config_.cluster.heartbeat_interval_ms);
  if (now - started_ < interval * config_.cluster.dead_after_missed_heartbeats) return;
  for (auto& [id, t] : troubled_) {
    const BlockState& b = blocks_.at(id);
    if (!b.complete || t.corrupt.empty()) continue;
    if (static_cast<int>(b.replicas.size()) >= b.replication) {
      // Enough good copies: the corrupt ones are no longer needed.
      for (const auto& node : t.corrupt) {
        WorkerState& w = *workers_.at(node);
        --w.block_count;
        w.pending_deletes.push_back(id);
        spdlog::info("block {} has {} good replicas: deleting the corrupt one on {}", id,
                     b.replicas.size(), node);
      }
      t.corrupt.clear();
      t.repair_rounds = 0;
      continue;
    }
    if (now < t.repair_retry) continue;
    for (const auto& node : t.corrupt) {
      pb::RepairCommand cmd;
      cmd.set_block_id(id);
      cmd.set_bytes(b.bytes);
      // Good copies nearest first, then the other corrupt ones, then its own.
      for (const auto& s : SortByDistance(b.replicas, node, id)) *cmd.add_sources() = Location(s);
      for (const auto& s : SortByDistance(t.corrupt, node, id)) {
        if (s != node) *cmd.add_sources() = Location(s);
      }
      *cmd.add_sources() = Location(node);
      workers_.at(node)->pending_repairs.push_back(std::move(cmd));
      spdlog::info("block {} has {}/{} good replicas: repairing the corrupt one on {} (round {})",
                   id, b.replicas.size(), b.replication, node, t.repair_rounds + 1);
    }
    // The retry interval of re-replication, doubled after every round up to
    // 64 times: a block whose only copies are all damaged at the same chunk
    // cannot be repaired until another replica comes back.
    const auto base = std::max<std::chrono::milliseconds>(10 * interval, std::chrono::milliseconds(5000));
    t.repair_retry = now + base * (1 << std::min<int>(t.repair_rounds, 6));
    ++t.repair_rounds;
  }
}

}  // namespace mr::master
