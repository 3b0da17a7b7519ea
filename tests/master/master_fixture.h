// A real Master in the test's process on a ManualClock (master/clock.h):
// its io_context on a thread of its own, RocksDB in a temporary directory,
// requests over real RPC as a worker, a writer and mrctl send them. The
// master's checks tick every 50 ms of real time; a worker is declared dead
// after 200 ms of the master's clock without a heartbeat.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "common/rpc.h"
#include "master/master.h"

namespace mr::master {

class MasterFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/mr-master-test-XXXXXX";
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
    std::filesystem::remove_all(dir_, ec);
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

  // A registration of worker `id` with `map_slots`, as mr-worker sends it.
  Status Register(const std::string& id, pb::RegisterReply* reply, int map_slots = 1) {
    return Call("cluster.Register", RegisterRequestOf(id, map_slots), reply);
  }
  Status Register(const std::string& id) {
    pb::RegisterReply reply;
    return Register(id, &reply);
  }
  pb::RegisterRequest RegisterRequestOf(const std::string& id, int map_slots = 1) {
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
    info->set_map_slots(map_slots);
    info->set_reduce_slots(1);
    return reg;
  }

  // The master's cluster.Status.
  pb::ClusterStatusReply ClusterStatus() {
    pb::ClusterStatusReply status;
    EXPECT_TRUE(Call("cluster.Status", pb::Empty(), &status).ok());
    return status;
  }

  // Whether the master lists `id` live now.
  bool Live(const std::string& id) {
    const pb::ClusterStatusReply status = ClusterStatus();
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

}  // namespace mr::master
