// The NameNode half's timing rules on a ManualClock (master/clock.h): a
// worker is declared dead after dead_after_missed_heartbeats ×
// heartbeat_interval_ms of *the master's clock* without a heartbeat, and an
// unfinished write's lease expires after 60 s of it, whatever real time
// passes. A real Master in this process (its io_context on a thread of its
// own, RocksDB in a temporary directory), requests over real RPC, as a
// worker, a writer and mrctl send them.
#include "tests/master/master_fixture.h"

namespace mr::master {
namespace {

using LivenessTest = MasterFixture;

TEST_F(LivenessTest, AWorkerIsDeadAfterTheMissedHeartbeatsOfTheMastersClock) {
  ASSERT_TRUE(Register("w1").ok());
  EXPECT_TRUE(Live("w1"));
  // Real time passes (ten times the limit, many liveness checks) but the
  // master's clock does not: no verdict.
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  EXPECT_TRUE(Live("w1")) << "liveness must read the master's clock, not the wall";
  clock_.Advance(199);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(Live("w1")) << "199 ms < 4 × 50 ms";
  clock_.Advance(2);
  bool dead = false;
  for (int i = 0; i < 100 && !dead; ++i) {  // bounded: ≤ 5 s of real time
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    dead = !Live("w1");
  }
  EXPECT_TRUE(dead) << "201 ms without a heartbeat on the master's clock";
}

// The lease of an unfinished write expires after max(60 s, 2 × rpc_timeout)
// of the master's clock without a word from its client: the path is free
// again.
TEST_F(LivenessTest, ALeaseExpiresOnTheMastersClock) {
  ASSERT_TRUE(Register("w1").ok());
  pb::CreateFileRequest create;
  create.set_path("/f");
  create.set_client_id("writer-1");
  pb::CreateFileReply lease;
  ASSERT_TRUE(Call("dfs.Create", create, &lease).ok());
  create.set_client_id("writer-2");
  pb::CreateFileReply second;
  EXPECT_FALSE(Call("dfs.Create", create, &second).ok()) << "writer-1 holds /f";
  clock_.Advance(59000);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(Call("dfs.Create", create, &second).ok()) << "59 s: the lease holds";
  clock_.Advance(1001);
  bool free = false;
  for (int i = 0; i < 100 && !free; ++i) {  // bounded: ≤ 5 s of real time
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    free = Call("dfs.Create", create, &second).ok();
  }
  EXPECT_TRUE(free) << "60 s and 1 ms without writer-1: its lease is gone";
}

}  // namespace
}  // namespace mr::master
