// Leases across a master restart, against a real local cluster: a client
// that held a lease before the restart must never touch a file another
// client opened after it (issue 10: two puts mixed into one file).
#include <future>
#include <random>
#include <thread>

#include "common/config.h"
#include "dfs/client.h"
#include "tests/integration/cluster_fixture.h"

namespace mr::testing {
namespace {

using namespace std::chrono_literals;
constexpr int64_t kBlock = 1 << 20;

class DfsLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<LocalCluster>(3, 2, "--block-size 1048576 --replication 2");
    ASSERT_EQ(cluster_->up().exit_code, 0) << cluster_->up().err;
    auto config = LoadClusterConfig(cluster_->config());
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    config_ = *config;
  }

  // Kills the master (no goodbye to anyone), starts it again and waits for
  // every worker to register with it.
  // Blocks the calling thread (tests call it from inside a coroutine).
  bool RestartMaster() {
    return cluster_->Script("kill master").exit_code == 0 &&
           cluster_->Script("start master").exit_code == 0 &&
           WaitFor([&] { return cluster_->LiveWorkers() == 3; }, 30s);
  }

  std::unique_ptr<dfs::DfsClient> NewClient() const {
    return std::make_unique<dfs::DfsClient>(config_.master.address,
                                            RpcOptions::FromConfig(config_, "test"),
                                            config_.dfs.transfer_chunk_bytes);
  }

  std::unique_ptr<LocalCluster> cluster_;
  ClusterConfig config_;
};

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// The lease RPCs as a client sends them, one call each.
awaitable<Result<pb::CreateFileReply>> Create(dfs::DfsClient& c, std::string path) {
  pb::CreateFileRequest req;
  req.set_path(path);
  req.set_client_id(c.client_id());
  pb::CreateFileReply reply;
  MR_CO_RETURN_IF_ERROR(co_await c.CallMaster("dfs.Create", req, &reply));
  co_return reply;
}
awaitable<Result<pb::AddBlockReply>> AddBlock(dfs::DfsClient& c, uint64_t lease, std::string path) {
  pb::AddBlockRequest req;
  req.set_lease_id(lease);
  req.set_path(path);
  req.set_client_id(c.client_id());
  pb::AddBlockReply reply;
  MR_CO_RETURN_IF_ERROR(co_await c.CallMaster("dfs.AddBlock", req, &reply));
  co_return reply;
}
awaitable<Status> CompleteBlock(dfs::DfsClient& c, uint64_t lease, std::string path, uint64_t block,
                                int64_t bytes, std::vector<std::string> replicas) {
  pb::CompleteBlockRequest req;
  req.set_lease_id(lease);
  req.set_path(path);
  req.set_client_id(c.client_id());
  req.set_block_id(block);
  req.set_bytes(bytes);
  for (const auto& r : replicas) req.add_replicas(r);
  pb::Empty reply;
  co_return co_await c.CallMaster("dfs.CompleteBlock", req, &reply);
}
awaitable<Status> CompleteFile(dfs::DfsClient& c, uint64_t lease, std::string path) {
  pb::CompleteFileRequest req;
  req.set_lease_id(lease);
  req.set_path(path);
  req.set_client_id(c.client_id());
  pb::Empty reply;
  co_return co_await c.CallMaster("dfs.CompleteFile", req, &reply);
}
awaitable<Status> AbandonFile(dfs::DfsClient& c, uint64_t lease, std::string path) {
  pb::AbandonFileRequest req;
  req.set_lease_id(lease);
  req.set_path(path);
  req.set_client_id(c.client_id());
  pb::Empty reply;
  co_return co_await c.CallMaster("dfs.AbandonFile", req, &reply);
}

// Writes one block of `bytes` through the pipeline AddBlock chose, and
// completes it in the lease.
awaitable<Status> WriteBlock(dfs::DfsClient& c, const RpcOptions& rpc, int64_t chunk,
                             uint64_t lease, std::string path, const std::string& bytes) {
  auto block = co_await AddBlock(c, lease, path);
  if (!block.ok()) co_return block.status();
  const std::vector<pb::ReplicaLocation> pipeline(block->pipeline().begin(),
                                                  block->pipeline().end());
  const dfs::ByteSource source = [&](int64_t off, int64_t n, std::string* out) {
    out->assign(bytes, static_cast<size_t>(off), static_cast<size_t>(n));
    return Status::OK();
  };
  auto committed = co_await dfs::WriteBlockPipeline(
      rpc, block->block_id(), pipeline, static_cast<int64_t>(bytes.size()), chunk, source);
  if (!committed.ok()) co_return committed.status();
  co_return co_await CompleteBlock(c, lease, path, block->block_id(),
                                   static_cast<int64_t>(bytes.size()), *committed);
}

// The user's report, driven RPC by RPC: client A opens /a, the master
// restarts, client B opens /b. Before the fix both got lease 1, and A's
// AddBlock/CompleteFile went into B's file (B's bytes then A's, under B's
// name) and A's AbandonFile killed B's put. Now every one of A's calls is
// refused, /a never appears, and B's put completes with B's bytes only.
TEST_F(DfsLeaseTest, StaleLeaseAfterMasterRestartTouchesNoOtherFile) {
  const std::string b_bytes = RandomBytes(kBlock, 2);
  const RpcOptions rpc = RpcOptions::FromConfig(config_, "test");
  const int64_t chunk = config_.dfs.transfer_chunk_bytes;
  // Named, not literals: GCC 12 destroys class-type temporaries in a
  // co_await operand twice (docs/development.md).
  const std::string path_a = "/lease/a", path_b = "/lease/b";
  // The clients live inside the coroutine: their sockets must not outlive
  // RunSync's io_context.
  Status s = RunSync([&]() -> awaitable<Status> {
    auto a = NewClient();
    auto b = NewClient();
    auto r = co_await Create(*a, path_a);
    if (!r.ok()) co_return r.status();
    const uint64_t lease_a = r->lease_id();

    if (!RestartMaster()) co_return Status::Internal("the master did not come back");

    r = co_await Create(*b, path_b);
    if (!r.ok()) co_return r.status();
    const uint64_t lease_b = r->lease_id();
    MR_CO_RETURN_IF_ERROR(co_await WriteBlock(*b, rpc, chunk, lease_b, path_b, b_bytes));

    // A's connection died with the old master; its first call may fail on
    // it (and closes it), the next ones go to the new master.
    auto ignored = co_await a->ClusterStatus();
    (void)ignored;
    auto added = co_await AddBlock(*a, lease_a, path_a);
    EXPECT_FALSE(added.ok()) << "A's stale lease " << lease_a << " got block " << added->block_id();
    if (!added.ok()) {
      EXPECT_TRUE(added.status().IsNotFound()) << added.status().ToString();
      EXPECT_NE(added.status().message().find("the master restarted"), std::string::npos)
          << added.status().ToString();
    }
    Status done = co_await CompleteFile(*a, lease_a, path_a);
    EXPECT_FALSE(done.ok()) << "A completed a file with stale lease " << lease_a;
    Status abandoned = co_await AbandonFile(*a, lease_a, path_a);
    EXPECT_FALSE(abandoned.ok()) << "A's abandon of stale lease " << lease_a << " was accepted";
    // B's lease used with A's path, or by A's client, is refused too.
    Status wrong_path = co_await CompleteFile(*b, lease_b, path_a);
    EXPECT_TRUE(wrong_path.IsPermissionDenied()) << wrong_path.ToString();
    Status wrong_client = co_await AbandonFile(*a, lease_b, path_b);
    EXPECT_TRUE(wrong_client.IsPermissionDenied()) << wrong_client.ToString();

    // B's put is intact: it finishes with one more block of its own.
    MR_CO_RETURN_IF_ERROR(co_await WriteBlock(*b, rpc, chunk, lease_b, path_b, b_bytes));
    co_return co_await CompleteFile(*b, lease_b, path_b);
  });
  ASSERT_TRUE(s.ok()) << s.ToString();

  EXPECT_NE(cluster_->Mrctl("dfs stat /lease/a").exit_code, 0) << "A's file appeared";
  auto stat = cluster_->MrctlJson("dfs stat --json /lease/b");
  EXPECT_EQ(stat["length"], 2 * kBlock);
  EXPECT_EQ(stat["block_size"], kBlock);
  const CommandResult cat = cluster_->Mrctl("dfs cat /lease/b");
  EXPECT_TRUE(cat.out == b_bytes + b_bytes)
      << "/lease/b holds " << cat.out.size() << " bytes, not B's";
}

// Two real puts paused around a master restart, as the user ran them:
// A pauses inside its second block, the master restarts, B starts and
// pauses inside its second block, A resumes, then B. A fails with one clear
// message and leaves no file; B is untouched and completes.
TEST_F(DfsLeaseTest, PutPausedAcrossMasterRestartFailsClearlyAndSparesOthers) {
  const std::string a_bytes = RandomBytes(3 * kBlock, 3);
  const std::string b_bytes = RandomBytes(3 * kBlock, 4);
  struct Gate {
    std::promise<void> paused, go;
    bool once = false;
  };
  Gate gate_a, gate_b;
  // Runs one put on its own thread; its source stops at the second block
  // until the test says go.
  auto put = [&](const std::string& path, const std::string& bytes, Gate& gate, Status* result) {
    return std::thread([&, path, result] {
      auto go = gate.go.get_future();
      *result = RunSync([&]() -> awaitable<Status> {
        auto client = NewClient();
        const dfs::ByteSource source = [&](int64_t off, int64_t n, std::string* out) {
          if (off >= kBlock && !gate.once) {
            gate.once = true;
            gate.paused.set_value();
            if (go.wait_for(120s) != std::future_status::ready)
              return Status::TimedOut("never resumed");
          }
          out->assign(bytes, static_cast<size_t>(off), static_cast<size_t>(n));
          return Status::OK();
        };
        const std::string first = bytes.substr(0, 100);
        const dfs::PutOptions options;
        co_return co_await client->Write(path, static_cast<int64_t>(bytes.size()), first, source,
                                         options);
      });
    });
  };
  Status a_result, b_result;
  std::thread a = put("/lease/a", a_bytes, gate_a, &a_result);
  const bool a_paused = gate_a.paused.get_future().wait_for(60s) == std::future_status::ready;
  const bool restarted = a_paused && RestartMaster();
  std::thread b = put("/lease/b", b_bytes, gate_b, &b_result);
  const bool b_paused = gate_b.paused.get_future().wait_for(60s) == std::future_status::ready;
  gate_a.go.set_value();
  a.join();
  gate_b.go.set_value();
  b.join();
  ASSERT_TRUE(a_paused && restarted && b_paused);

  EXPECT_FALSE(a_result.ok());
  EXPECT_NE(a_result.message().find("the master restarted"), std::string::npos)
      << a_result.ToString();
  EXPECT_NE(a_result.message().find("the put of /lease/a did not complete"), std::string::npos)
      << a_result.ToString();
  EXPECT_NE(cluster_->Mrctl("dfs stat /lease/a").exit_code, 0) << "A's file appeared";
  ASSERT_TRUE(b_result.ok()) << b_result.ToString();
  auto stat = cluster_->MrctlJson("dfs stat --json /lease/b");
  EXPECT_EQ(stat["length"], 3 * kBlock);
  const CommandResult cat = cluster_->Mrctl("dfs cat /lease/b");
  EXPECT_TRUE(cat.out == b_bytes) << "/lease/b holds " << cat.out.size() << " bytes, not B's";
}

}  // namespace
}  // namespace mr::testing
