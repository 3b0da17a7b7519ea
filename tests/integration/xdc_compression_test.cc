// Compression between datacenters (cluster.inter_dc_zstd_level,
// docs/wire-format.md "Compression between datacenters") on real local
// clusters: a block read or pipeline hop whose ends are in different
// datacenters moves well under its raw bytes and an intra-datacenter one
// does not; the data is identical either way; a compressed frame that does
// not decompress sends the reader to another replica; and a job's shuffle
// and output replication across datacenters shrink while its output stays
// byte-identical.
#include <fstream>
#include <map>
#include <random>

#include "common/config.h"
#include "dfs/client.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

// Text that compresses about as well as `mrctl gen text` (zstd -1 ~2x).
std::string Text(size_t n, uint64_t seed) {
  static const char* kWords[] = {"the", "map", "reduce", "block", "datacenter", "shuffle", "zstd",
                                 "replica", "tenant", "link", "bytes", "wire", "of", "and", "a"};
  std::mt19937_64 rng(seed);
  std::string s;
  while (s.size() < n) {
    s += kWords[rng() % 15];
    s += rng() % 12 == 0 ? '\n' : ' ';
    if (rng() % 7 == 0) s += std::to_string(rng() % 100000);
  }
  s.resize(n);
  return s;
}

class XdcBlocksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<LocalCluster>(2, 2, "--block-size 1048576 --replication 2");
    ASSERT_EQ(cluster_->up().exit_code, 0) << cluster_->up().err;
    auto config = LoadClusterConfig(cluster_->config());
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    config_ = *config;
    ASSERT_EQ(config_.cluster.inter_dc_zstd_level, 3);  // the default
  }

  // Runs `body` with a client that says it is in datacenter `dc`.
  Status WithClient(const std::string& dc, std::function<awaitable<Status>(dfs::DfsClient&)> body) {
    return RunSync([&]() -> awaitable<Status> {
      dfs::DfsClient client(config_.master.address, RpcOptions::FromConfig(config_, "test"),
                            config_.dfs.transfer_chunk_bytes);
      client.set_location({"", dc, ""});
      client.set_inter_dc_zstd_level(config_.cluster.inter_dc_zstd_level);
      co_return co_await body(client);
    });
  }

  std::unique_ptr<LocalCluster> cluster_;
  ClusterConfig config_;
};

// Writes `bytes` to `path` with replica 1 in dc1 and `replication` copies.
awaitable<Status> Write(dfs::DfsClient& c, const char* path, const std::string* bytes, int replication) {
  const dfs::ByteSource source = [bytes](int64_t off, int64_t n, std::string* out) {
    out->assign(*bytes, static_cast<size_t>(off), static_cast<size_t>(n));
    return Status::OK();
  };
  dfs::PutOptions options;
  options.replication = replication;
  options.datacenter = "dc1";
  const std::string name = path;
  const std::string first = bytes->substr(0, 100);
  co_return co_await c.Write(name, static_cast<int64_t>(bytes->size()), first, source, options);
}

// Reads all of `path` into *out; *wire gets the bytes the reads moved.
awaitable<Status> ReadAll(dfs::DfsClient& c, const char* path, std::string* out, int64_t* wire) {
  c.set_traffic_observer([wire](const dfs::TransferEvent& e) { *wire += e.bytes; });
  const std::string name = path;
  co_return co_await c.Read(name, [out](std::span<const char> d) {
    out->append(d.data(), d.size());
    return Status::OK();
  });
}

// The tenant pays for the bytes between datacenters: a read from the
// other datacenter moves well under half the raw bytes; one within the
// datacenter moves them all (compression there would only cost CPU).
TEST_F(XdcBlocksTest, ReadsAcrossDatacentersAreCompressedWithinOneAreNot) {
  const std::string bytes = Text(3 * 1048576 + 777, 1);
  Status s = WithClient("dc1", [&](dfs::DfsClient& c) { return Write(c, "/one.txt", &bytes, 1); });
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (const std::string dc : {"dc2", "dc1"}) {
    std::string got;
    int64_t wire = 0;
    s = WithClient(dc, [&](dfs::DfsClient& c) { return ReadAll(c, "/one.txt", &got, &wire); });
    ASSERT_TRUE(s.ok()) << dc << ": " << s.ToString();
    EXPECT_TRUE(got == bytes) << dc;
    const double ratio = static_cast<double>(wire) / static_cast<double>(bytes.size());
    if (dc == "dc2") {
      EXPECT_LT(ratio, 0.5) << "a read across datacenters moved " << wire << " bytes";
    } else {
      EXPECT_GE(ratio, 1.0) << "a read within dc1 moved " << wire << " bytes";
    }
  }
}

// A pipeline dc1 → dc2 written from dc1: the first hop (within dc1) carries
// the raw bytes, the second (dc1 → dc2, forwarded by the first node)
// compressed ones, each counted at its sender's socket; both replicas hold
// the same bytes.
TEST_F(XdcBlocksTest, OnlyThePipelineHopAcrossDatacentersIsCompressed) {
  const std::string bytes = Text(2 * 1048576 + 5, 2);
  std::vector<dfs::TransferEvent> hops;
  std::vector<std::string> to_dc;
  Status s = WithClient("dc1", [&](dfs::DfsClient& c) -> awaitable<Status> {
    c.set_traffic_observer([&](const dfs::TransferEvent& e) {
      hops.push_back(e);
      to_dc.push_back(e.to ? e.to->datacenter() : "");
    });
    co_return co_await Write(c, "/two.txt", &bytes, 2);
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::map<std::string, int64_t> by_dc;  // wire bytes into each datacenter
  for (size_t i = 0; i < hops.size(); ++i) by_dc[to_dc[i]] += hops[i].bytes;
  const double n = static_cast<double>(bytes.size());
  EXPECT_GE(by_dc["dc1"] / n, 1.0);  // client → first node, same datacenter
  EXPECT_LT(by_dc["dc2"] / n, 0.5);  // first node → second, across
  for (const std::string dc : {"dc2", "dc1"}) {  // each reads its own datacenter's replica
    std::string got;
    int64_t wire = 0;
    s = WithClient(dc, [&](dfs::DfsClient& c) { return ReadAll(c, "/two.txt", &got, &wire); });
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(got == bytes) << dc;
    EXPECT_GE(wire, static_cast<int64_t>(bytes.size())) << dc << " read across datacenters";
  }
}

// A replica in another datacenter that sends a compressed frame which does
// not decompress (a fake worker on a real socket, first in the replica
// list) is Corruption: the reader reports it and reads the block from the
// real replica, losing nothing.
TEST_F(XdcBlocksTest, ACorruptCompressedFrameFailsOverToAnotherReplica) {
  const std::string bytes = Text(1048576, 3);
  Status s = WithClient("dc1", [&](dfs::DfsClient& c) { return Write(c, "/three.txt", &bytes, 1); });
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::string got;
  int served = 0;
  s = WithClient("dc2", [&](dfs::DfsClient& c) -> awaitable<Status> {
    auto stat = co_await c.Stat("/three.txt");
    if (!stat.ok()) co_return stat.status();
    pb::LocatedBlock block = stat->blocks(0);
    RpcServer fake(co_await asio::this_coro::executor, RpcOptions::FromConfig(config_, "fake"), "fake");
    fake.Handle("dn.ReadBlock", [&](ServerCall& call) -> awaitable<Status> {
      ++served;
      pb::ReadBlockRequest req;
      call.Parse(&req);
      EXPECT_GT(req.zstd_level(), 0);  // asked for compression across datacenters
      pb::ReadBlockReply header;
      header.set_block_length(block.bytes());
      call.replied = true;
      MR_CO_RETURN_IF_ERROR(co_await call.conn.SendReply(header));
      pb::DataChunk chunk;  // claims 64 KiB of compressed data; sends garbage
      chunk.set_offset(0);
      chunk.set_zstd_raw_bytes(65536);
      chunk.add_checksums(0);
      const std::string garbage(1000, 'x');
      co_return co_await call.conn.SendReply(chunk, garbage);
    });
    MR_CO_RETURN_IF_ERROR(fake.Listen({"127.0.0.1", 0}));
    fake.Start();
    pb::LocatedBlock with_fake = block;
    with_fake.clear_replicas();
    pb::ReplicaLocation* f = with_fake.add_replicas();
    f->set_node_id("fake");
    f->set_address("127.0.0.1:" + std::to_string(fake.port()));
    f->set_datacenter("dc1");
    for (const auto& r : block.replicas()) *with_fake.add_replicas() = r;
    Status read = co_await c.ReadBlock(with_fake, 0, -1, [&](std::span<const char> d) {
      got.append(d.data(), d.size());
      return Status::OK();
    });
    EXPECT_EQ(c.corrupt_replicas_seen(), 1);
    fake.Stop();
    co_return read;
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(served, 1);
  EXPECT_TRUE(got == bytes);
}

class XdcJobTest : public JobTest {};

// One Sort on two clusters that differ only in the key: with the default,
// the shuffle and the output replication between datacenters shrink (the
// segments recompressed at level 3, the pipeline hop compressed), the
// bytes within a datacenter do not, and the output is byte-identical.
TEST_F(XdcJobTest, SortMovesFewerBytesAcrossDatacentersSameOutput) {
  const std::string input = Generate("text", "6M", 21);
  std::map<int, nlohmann::json> records;
  std::map<int, std::string> outputs;
  for (int level : {0, 3}) {
    LocalCluster c(2, 2, "--block-size 1048576 --replication 2 --heartbeat-ms 100 --jobs-option 'output_replication = 2' --cluster-option "
                         "'inter_dc_zstd_level = " + std::to_string(level) + "'");
    ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
    Put(c, input, "/in/text.txt");
    records[level] = RunJob(c, "sort", "/in/text.txt", "/out/sort", 2, "");
    ASSERT_EQ(records[level]["state"], "succeeded") << records[level].dump(2);
    outputs[level] = Cat(c, "/out/sort");
  }
  EXPECT_TRUE(outputs[0] == outputs[3]);
  const auto other = [&](int level, const char* what) {
    return static_cast<double>(records[level][what]["other_dc"].get<int64_t>());
  };
  ASSERT_GT(other(0, "shuffle_bytes"), 0);
  ASSERT_GT(other(0, "output_replication_bytes"), 0);
  EXPECT_LT(other(3, "shuffle_bytes") / other(0, "shuffle_bytes"), 0.95);
  EXPECT_LT(other(3, "output_replication_bytes") / other(0, "output_replication_bytes"), 0.6);
  EXPECT_LT(records[3]["inter_dc_bytes"].get<double>() / records[0]["inter_dc_bytes"].get<double>(), 0.75);
}

}  // namespace
}  // namespace mr::testing
