// DfsClient against a real local cluster: writes from memory and ranged
// block reads at awkward offsets, compared with the bytes written.
#include "dfs/client.h"

#include <random>

#include "common/config.h"
#include "tests/integration/cluster_fixture.h"

namespace mr::testing {
namespace {

class DfsClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<LocalCluster>(3, 2, "--block-size 1048576 --replication 2");
    ASSERT_EQ(cluster_->up().exit_code, 0) << cluster_->up().err;
    auto config = LoadClusterConfig(cluster_->config());
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    config_ = *config;
  }

  // Runs `body` with a client connected to the cluster.
  Status WithClient(std::function<awaitable<Status>(dfs::DfsClient&)> body) {
    // The client lives inside the coroutine: its sockets must not outlive
    // RunSync's io_context.
    return RunSync([&]() -> awaitable<Status> {
      dfs::DfsClient client(config_.master.address, RpcOptions::FromConfig(config_, "test"),
                            config_.dfs.transfer_chunk_bytes);
      co_return co_await body(client);
    });
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

// Any byte range of a block comes back exactly, even one that starts and
// ends inside 64 KiB checksum chunks (the worker sends whole chunks and the
// client trims; a bug here would make healthy replicas look corrupt).
TEST_F(DfsClientTest, RangedBlockReadsReturnExactlyTheRange) {
  const std::string bytes = RandomBytes(2 * 1048576 + 12345, 5);
  Status s = WithClient([&](dfs::DfsClient& c) -> awaitable<Status> {
    dfs::ByteSource source = [&](int64_t off, int64_t n, std::string* out) {
      out->assign(bytes, static_cast<size_t>(off), static_cast<size_t>(n));
      return Status::OK();
    };
    // Named arguments, not temporaries: GCC 12 destroys class-type
    // temporaries in a co_await operand twice (docs/development.md).
    const std::string first = bytes.substr(0, 100);
    const dfs::PutOptions options;
    MR_CO_RETURN_IF_ERROR(
        co_await c.Write("/r.bin", static_cast<int64_t>(bytes.size()), first, source, options));
    auto stat = co_await c.Stat("/r.bin");
    if (!stat.ok()) co_return stat.status();
    EXPECT_EQ(stat->blocks_size(), 3);
    const std::vector<std::pair<int64_t, int64_t>> ranges = {
        {0, 1}, {0, 100000}, {65535, 2}, {65536, 65536}, {100, 300000}, {1000000, 48576},
        {1048575, 1}, {0, -1}, {524288, -1}};
    for (const auto& block : stat->blocks()) {
      for (auto [off, len] : ranges) {
        if (off >= block.bytes()) continue;
        std::string got;
        const dfs::ByteSink sink = [&](std::span<const char> d) {
          got.append(d.data(), d.size());
          return Status::OK();
        };
        Status r = co_await c.ReadBlock(block, off, len, sink);
        EXPECT_TRUE(r.ok()) << r.ToString();
        const int64_t n = len < 0 ? block.bytes() - off : std::min(len, block.bytes() - off);
        EXPECT_EQ(got, bytes.substr(static_cast<size_t>(block.offset() + off), static_cast<size_t>(n)))
            << "block at " << block.offset() << " range " << off << "+" << len;
      }
    }
    EXPECT_EQ(c.corrupt_replicas_seen(), 0);
    co_return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  // No replica was reported bad: every block still has both copies.
  auto stat = cluster_->MrctlJson("dfs stat --json /r.bin");
  for (const auto& b : stat["blocks"]) EXPECT_EQ(b["replicas"].size(), 2u);
}

// An empty file is a file with no blocks, and reads back as nothing.
TEST_F(DfsClientTest, EmptyFileRoundTrips) {
  Status s = WithClient([&](dfs::DfsClient& c) -> awaitable<Status> {
    dfs::ByteSource none = [](int64_t, int64_t, std::string*) { return Status::OK(); };
    const dfs::PutOptions options;
    MR_CO_RETURN_IF_ERROR(co_await c.Write("/empty", 0, "", none, options));
    int64_t n = 0;
    const dfs::ByteSink count = [&](std::span<const char> d) {
      n += static_cast<int64_t>(d.size());
      return Status::OK();
    };
    MR_CO_RETURN_IF_ERROR(co_await c.Read("/empty", count));
    EXPECT_EQ(n, 0);
    co_return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(cluster_->MrctlJson("dfs stat --json /empty")["input_type"], "text");
}

}  // namespace
}  // namespace mr::testing
