// The NameNode half's timing rules on a ManualClock (master/clock.h): a
// worker is declared dead after dead_after_missed_heartbeats ×
// heartbeat_interval_ms of *the master's clock* without a heartbeat, and an
// unfinished write's lease expires after 60 s of it, whatever real time
// passes. A real Master in this process (its io_context on a thread of its
// own, RocksDB in a temporary directory), requests over real RPC, as a
// worker, a writer and mrctl send them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "common/rpc.h"
#include "master/master.h"

namespace mr::master {
namespace {

namespace fs = std::filesystem;

class LivenessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/mr-liveness-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    config_.master.data_dir = dir_;
    config_.master.address = {"127.0.0.1", 0};
    config_.cluster.heartbeat_interval_ms = 50;   // real ticks of the master's checks
    config_.cluster.dead_after_missed_heartbeats = 4;  // 200 ms of the master's clock
    auto m = Master::Create(config_, io_, &clock_);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    master_ = std::move(m).value();
    ASSERT_TRUE(master_->Start().ok());
    address_ = {"127.0.0.1", master_->port()};
    thread_ = std::thread([this] {
      auto guard = asio::make_work_guard(io_);
      io_.run();
    });
  }

  void TearDown() override {
    asio::post(io_, [this] { master_->Stop(); io_.stop(); });
    if (thread_.joinable()) thread_.join();
    master_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // One call to the master from this thread.
  template <typename Request, typename Reply>
  Status Call(const std::string& method, const Request& req, Reply* reply) {
    asio::io_context io;
    Status result = Status::Internal("not run");
    asio::co_spawn(io, [&]() -> awaitable<void> {
      auto conn = co_await Connect(address_, RpcOptions::FromConfig(config_, "test"));
      if (!conn.ok()) {
        result = conn.status();
        co_return;
      }
      result = co_await (*conn)->Call(method, req, reply);
    }, asio::detached);
    io.run();
    return result;
  }

  Status Register(const std::string& id) {
    pb::RegisterRequest reg;
    pb::SharedSettings* s = reg.mutable_settings();
    s->set_cluster_name(config_.cluster.name);
    s->set_block_size(config_.dfs.block_size);
    s->set_transfer_chunk_bytes(config_.dfs.transfer_chunk_bytes);
    s->set_max_frame_bytes(config_.cluster.max_frame_bytes);
    s->set_heartbeat_interval_ms(config_.cluster.heartbeat_interval_ms);
    s->set_rpc_timeout_ms(config_.cluster.rpc_timeout_ms);
    pb::WorkerInfo* info = reg.mutable_worker();
    info->set_id(id);
    info->set_address("127.0.0.1:1");
    info->set_datacenter("dc1");
    info->set_map_slots(1);
    info->set_reduce_slots(1);
    pb::RegisterReply reply;
    return Call("cluster.Register", reg, &reply);
  }

  // Whether the master lists `id` live now.
  bool Live(const std::string& id) {
    pb::ClusterStatusReply status;
    EXPECT_TRUE(Call("cluster.Status", pb::Empty(), &status).ok());
    for (const pb::WorkerStatus& w : status.workers()) {
      if (w.worker().id() == id) return w.live();
    }
    ADD_FAILURE() << id << " is not listed";
    return false;
  }

  ManualClock clock_;
  ClusterConfig config_;
  std::string dir_;
  asio::io_context io_;
  std::unique_ptr<Master> master_;
  HostPort address_;
  std::thread thread_;
};

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
