// Re-replication on a real Master (master/replication.cc) over a ManualClock:
// a block whose replicas fall short of its replication (setrep up, a holder
// decommissioning, a holder dead) gets a copy ordered in some holder's
// heartbeat reply, a surplus one (setrep down) a delete, and cluster.Status
// counts it under-replicated exactly until the copy lands. The master
// visits only the blocks that need it (attention_), so every way a block
// can fall short or over is walked here once.
#include <set>
#include <vector>

#include "tests/master/master_fixture.h"

namespace mr::master {
namespace {

const std::vector<std::string> kWorkers = {"w1", "w2", "w3", "w4"};

class ReplicationTest : public MasterFixture {
 protected:
  void SetUp() override {
    MasterFixture::SetUp();
    for (const std::string& w : kWorkers) ASSERT_TRUE(Register(w).ok());
    live_ = {kWorkers.begin(), kWorkers.end()};
    // Re-replication waits out the liveness limit after a start (200 ms of
    // the master's clock); the workers beat meanwhile.
    Pass(150);
    Pass(60);
  }

  // Every live worker's heartbeat; what the replies asked them to do.
  struct Orders {
    std::vector<std::pair<std::string, pb::TransferCommand>> transfers;  // source, command
    std::vector<std::string> deletes;                                    // holders told to delete
  };
  Orders BeatAll(uint64_t block, const std::vector<std::pair<std::string, uint64_t>>& received = {}) {
    Orders orders;
    for (const std::string& id : live_) {
      pb::HeartbeatRequest beat;
      beat.set_worker_id(id);
      beat.set_free_bytes(int64_t{1} << 40);
      for (const auto& [holder, b] : received) {
        if (holder != id) continue;
        pb::BlockRef* ref = beat.add_received();
        ref->set_id(b);
        ref->set_bytes(kBytes);
      }
      pb::HeartbeatReply reply;
      EXPECT_TRUE(Call("cluster.Heartbeat", beat, &reply).ok()) << id;
      for (const pb::TransferCommand& t : reply.transfers()) {
        if (t.block_id() == block) orders.transfers.emplace_back(id, t);
      }
      for (uint64_t d : reply.delete_blocks()) {
        if (d == block) orders.deletes.push_back(id);
      }
    }
    return orders;
  }

  // `ms` of the master's clock pass; the live workers beat after it.
  void Pass(int64_t ms) {
    clock_.Advance(ms);
    BeatAll(0);
  }

  // Beats until a reply orders something about `block` (the master's
  // checks tick every 50 ms of real time); bounded: at most 7 s. The
  // master's clock first passes the retry time of a copy ordered before
  // (max(10 heartbeats, 5 s): no second copy of a block sooner).
  Orders AwaitOrders(uint64_t block) {
    for (int i = 0; i < 135; ++i) {
      if (i < 35) clock_.Advance(150);
      Orders o = BeatAll(block);
      if (!o.transfers.empty() || !o.deletes.empty()) return o;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "no order about block " << block << " in 7 s";
    return {};
  }

  // A one-block file at `path` with `replication`, its replicas on `holders`.
  uint64_t WriteFile(const std::string& path, int replication, const std::vector<std::string>& holders) {
    pb::CreateFileRequest create;
    create.set_path(path);
    create.set_replication(replication);
    create.set_client_id("test");
    pb::CreateFileReply lease;
    EXPECT_TRUE(Call("dfs.Create", create, &lease).ok());
    // Every request of the lease names it, its path and its client.
    auto of_lease = [&](auto* req) {
      req->set_lease_id(lease.lease_id());
      req->set_path(path);
      req->set_client_id("test");
    };
    pb::AddBlockRequest add;
    of_lease(&add);
    pb::AddBlockReply placed;
    const Status added = Call("dfs.AddBlock", add, &placed);
    EXPECT_TRUE(added.ok()) << added.ToString();
    pb::CompleteBlockRequest done;
    of_lease(&done);
    done.set_block_id(placed.block_id());
    done.set_bytes(kBytes);
    for (const std::string& h : holders) done.add_replicas(h);
    pb::Empty empty;
    EXPECT_TRUE(Call("dfs.CompleteBlock", done, &empty).ok());
    pb::CompleteFileRequest complete;
    of_lease(&complete);
    EXPECT_TRUE(Call("dfs.CompleteFile", complete, &empty).ok());
    return placed.block_id();
  }

  void SetReplication(const std::string& path, int replication) {
    pb::SetReplicationRequest req;
    req.set_path(path);
    req.set_replication(replication);
    pb::SetReplicationReply reply;
    ASSERT_TRUE(Call("dfs.SetReplication", req, &reply).ok());
  }

  int64_t Under() { return ClusterStatus().under_replicated_blocks(); }

  // Lets every retry time pass and the master tick a few times, so the
  // block is no longer troubled (replication.cc): what brings it back to
  // the master's attention next is the change each step makes alone.
  void Settle() {
    for (int i = 0; i < 36; ++i) Pass(150);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }

  // The one copy ordered for `block`: from a holder in `holders` to a node
  // outside them. Returns the target, after it reported the block.
  std::string CopyLands(uint64_t block, const std::set<std::string>& holders) {
    const Orders o = AwaitOrders(block);
    EXPECT_EQ(o.transfers.size(), 1u);
    EXPECT_TRUE(o.deletes.empty());
    if (o.transfers.size() != 1 || o.transfers[0].second.targets_size() != 1) return "";
    const auto& [source, cmd] = o.transfers[0];
    const std::string target = cmd.targets(0).node_id();
    EXPECT_TRUE(holders.count(source)) << source;
    EXPECT_FALSE(holders.count(target)) << target;
    BeatAll(block, {{target, block}});
    return target;
  }

  static constexpr int64_t kBytes = 1000;
  std::set<std::string> live_;
};

TEST_F(ReplicationTest, EveryWayABlockFallsShortOrOverIsSeenCopiedTrimmedAndCounted) {
  const uint64_t block = WriteFile("/f", 2, {"w1", "w2"});
  EXPECT_EQ(ClusterStatus().blocks(), 1);
  EXPECT_EQ(Under(), 0);

  // setrep 3: short by one until a third copy lands.
  SetReplication("/f", 3);
  EXPECT_EQ(Under(), 1);
  const std::string third = CopyLands(block, {"w1", "w2"});
  ASSERT_FALSE(third.empty());
  EXPECT_EQ(Under(), 0);
  Settle();

  // setrep 2: one of the three copies goes.
  SetReplication("/f", 2);
  Orders trim = AwaitOrders(block);
  ASSERT_EQ(trim.deletes.size(), 1u);
  EXPECT_TRUE(trim.transfers.empty());
  std::set<std::string> holders = {"w1", "w2", third};
  holders.erase(trim.deletes[0]);
  EXPECT_EQ(Under(), 0);
  Settle();

  // A holder decommissions: its copy no longer counts, another is made.
  const std::string draining = *holders.begin();
  pb::DecommissionRequest decommission;
  decommission.set_worker_id(draining);
  pb::Empty empty;
  ASSERT_TRUE(Call("cluster.Decommission", decommission, &empty).ok());
  EXPECT_EQ(Under(), 1);
  const std::string replacement = CopyLands(block, holders);
  ASSERT_FALSE(replacement.empty());
  EXPECT_EQ(Under(), 0);
  Settle();
  // Recommissioned, it holds a surplus copy again: one goes.
  ASSERT_TRUE(Call("cluster.Recommission", decommission, &empty).ok());
  holders.insert(replacement);
  trim = AwaitOrders(block);
  ASSERT_EQ(trim.deletes.size(), 1u);
  holders.erase(trim.deletes[0]);
  ASSERT_EQ(holders.size(), 2u);
  EXPECT_EQ(Under(), 0);
  Settle();

  // A holder dies: short by one until a copy lands elsewhere.
  const std::string dead = *holders.begin();
  live_.erase(dead);
  Pass(150);
  Pass(60);  // 210 ms without a beat from it
  for (int i = 0; i < 100 && Live(dead); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_FALSE(Live(dead));
  EXPECT_EQ(Under(), 1);
  holders.erase(dead);
  EXPECT_FALSE(CopyLands(block, holders).empty());
  EXPECT_EQ(Under(), 0);
}

// A worker whose full block report does not fit a frame registers with its
// first part and sends the rest in cluster.BlockReport calls
// (dfs/block_report.h). Until the last part is in, the blocks it has not
// reported yet are not lost: no copy is ordered. A report that stalls ends
// when its worker is declared dead, and copies go ahead.
TEST_F(ReplicationTest, AReportInPartsHoldsCopiesBackUntilItsLastPartOrItsWorkerDies) {
  const uint64_t block = WriteFile("/g", 2, {"w1", "w2"});
  Settle();
  // w2 registers again (its old replicas are forgotten): the block is not
  // in the first part.
  pb::RegisterRequest reg = RegisterRequestOf("w2");
  reg.set_report_continues(true);
  pb::RegisterReply registered;
  ASSERT_TRUE(Call("cluster.Register", reg, &registered).ok());
  EXPECT_EQ(Under(), 1);  // counted honestly meanwhile
  for (int i = 0; i < 20; ++i) {  // a second of the master's ticks, past every retry time
    clock_.Advance(150);
    EXPECT_TRUE(BeatAll(block).transfers.empty()) << "a copy was ordered while w2's report was arriving";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // A middle part with a block the namespace does not know, then the last.
  pb::BlockReportRequest part;
  part.set_worker_id("w2");
  part.add_blocks()->set_id(987654321);
  pb::BlockReportReply answered;
  ASSERT_TRUE(Call("cluster.BlockReport", part, &answered).ok());
  ASSERT_EQ(answered.delete_blocks_size(), 1);
  EXPECT_EQ(answered.delete_blocks(0), 987654321u);
  part.clear_blocks();
  part.add_blocks()->set_id(block);
  part.mutable_blocks(0)->set_bytes(kBytes);
  part.set_last(true);
  ASSERT_TRUE(Call("cluster.BlockReport", part, &answered).ok());
  EXPECT_EQ(Under(), 0);
  // The report is over: another part is refused.
  const Status late = Call("cluster.BlockReport", part, &answered);
  EXPECT_TRUE(late.IsFailedPrecondition()) << late.ToString();
  Settle();

  // Again, and w2 goes silent mid-report: once it is declared dead, the
  // block gets its copy.
  ASSERT_TRUE(Call("cluster.Register", reg, &registered).ok());
  live_.erase("w2");
  Pass(150);
  Pass(60);  // 210 ms without a beat from it
  for (int i = 0; i < 100 && Live("w2"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_FALSE(Live("w2"));
  EXPECT_FALSE(CopyLands(block, {"w1", "w2"}).empty());
  EXPECT_EQ(Under(), 0);
}

}  // namespace
}  // namespace mr::master
