// libFuzzer harness: every RPC of mr-worker (dn.ReadBlock, dn.WriteBlock,
// shuffle.Fetch), before and after authentication.
//
// One real Worker (worker/worker.h) runs in this process for the whole
// fuzzing session: a real block store (block files + RocksDB) in a temporary
// directory, holding three blocks written at start-up, and an RpcServer on
// 127.0.0.1 whose io_context the harness thread runs. Its master is
// 127.0.0.1:1, where nothing listens, so it never gets tasks. Each input is
// one connection (tests/fuzz/rpc_driver.h gives the input format).
//
// Two repairs keep the fuzzer on the worker's own code: a WriteBlock's
// downstream addresses are pointed at this worker itself (even port) or at
// the closed 127.0.0.1:1 (odd port), so the pipeline never leaves the
// machine; and a DataChunk sent with flags & 0x40 gets the right XXH3
// checksums, so written blocks can commit.
//
// Checks: the server closes the connection and never hangs, every frame it
// sends decodes, and before authentication it sends only its Hello and at
// most one error (MR_FUZZ_VERBOSE=1 prints every frame it sent, to check
// what a seed reaches). ASan, UBSan and LeakSanitizer do the rest.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "dfs/block_store.h"
#include "proto/dfs.pb.h"
#include "proto/job.pb.h"
#include "tests/fuzz/rpc_driver.h"
#include "worker/worker.h"

namespace mr::fuzz {
namespace {

constexpr int kTimeoutMs = 5000;

ClusterConfig MakeConfig(const std::string& dir) {
  ClusterConfig c;
  c.cluster.name = "fuzz";
  c.cluster.secret = kSecret;
  c.cluster.rpc_timeout_ms = kTimeoutMs;
  c.cluster.heartbeat_interval_ms = 3600 * 1000;  // one try to reach the master per hour
  c.master.address = {"127.0.0.1", 1};
  c.master.data_dir = dir + "/master";
  c.dfs.transfer_chunk_bytes = 64 << 10;
  WorkerOptions w;
  w.id = "w1";
  w.address = {"127.0.0.1", 0};
  w.datacenter = "dc1";
  w.data_dir = dir + "/w1";
  c.workers.push_back(w);
  return c;
}

// Blocks 1 (100 bytes), 2 (150000 bytes: three checksum chunks) and 3
// (empty), for dn.ReadBlock to read.
void WriteBlocks(const std::string& dir) {
  auto store = dfs::BlockStore::Open(dir + "/w1/blocks", {});
  if (!store.ok()) Fail("BlockStore::Open: " + store.status().ToString());
  const std::pair<uint64_t, size_t> blocks[] = {{1, 100}, {2, 150000}, {3, 0}};
  for (auto [id, bytes] : blocks) {
    std::string data(bytes, '\0');
    for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<char>('a' + (i * 7 + id) % 26);
    auto writer = (*store)->NewWriter(id);
    Status s = writer.status();
    if (s.ok()) s = (*writer)->Append(data);
    if (s.ok()) s = (*writer)->Commit();
    if (!s.ok()) Fail("writing block " + std::to_string(id) + ": " + s.ToString());
  }
}

struct Harness {
  asio::io_context io{1};
  std::string dir;
  std::unique_ptr<worker::Worker> worker;
  std::unique_ptr<Driver> driver;
  // Record byte 0 indexes this table: append only, so the corpus keeps its meaning.
  std::vector<std::string> names{"dn.ReadBlock", "dn.WriteBlock", "shuffle.Fetch"};
};

Harness* g_harness = nullptr;

// The two repairs described at the top.
void Repair(FuzzFrame& f, uint16_t self_port) {
  if (f.method == "dn.WriteBlock") {
    pb::WriteBlockRequest req;
    if (!req.ParseFromString(f.body)) return;
    for (auto& node : *req.mutable_downstream()) {
      auto address = ParseHostPort(node.address());
      if (!address.ok()) continue;
      const uint16_t port = address->port % 2 == 0 ? self_port : 1;
      node.set_address("127.0.0.1:" + std::to_string(port));
    }
    f.body = req.SerializeAsString();
  } else if (f.flags & 0x40) {
    pb::DataChunk chunk;
    if (!chunk.ParseFromString(f.body)) return;
    const std::vector<uint64_t> sums = dfs::ChunkChecksums(f.data);
    chunk.mutable_checksums()->Assign(sums.begin(), sums.end());
    f.body = chunk.SerializeAsString();
  }
}

}  // namespace
}  // namespace mr::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace mr::fuzz;
  spdlog::set_level(spdlog::level::off);
  auto* h = new Harness;
  h->dir = MakeTempDir("mr-fuzz-worker");
  g_harness = h;
  WriteBlocks(h->dir);
  auto worker = mr::worker::Worker::Create(MakeConfig(h->dir), "w1", h->io);
  if (!worker.ok()) Fail("Worker::Create: " + worker.status().ToString());
  h->worker = std::move(worker).value();
  if (auto s = h->worker->Start(); !s.ok()) Fail("Worker::Start: " + s.ToString());
  h->driver = std::make_unique<Driver>(h->io, h->worker->port(), kTimeoutMs);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mr::fuzz;
  if (size == 0) return 0;
  Harness& h = *g_harness;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    CheckPreAuth(h.driver->PreAuth(rest));
    return 0;
  }
  std::vector<FuzzFrame> frames = ParseRecords(rest, h.names);
  for (FuzzFrame& f : frames) Repair(f, h.worker->port());
  const std::vector<mr::pb::Frame> replies = h.driver->PostAuth(frames);
  static const bool verbose = std::getenv("MR_FUZZ_VERBOSE") != nullptr;
  for (const auto& r : replies) {
    if (verbose) {
      std::fprintf(stderr, "frame: %d %s (%zu body bytes)\n", r.status_code(),
                   r.status_message().c_str(), r.body().size());
    }
  }
  return 0;
}
