// libFuzzer harness: every RPC of mr-master, before and after
// authentication.
//
// One real Master (master/master.h) runs in this process for the whole
// fuzzing session: its namespace and job history are real RocksDB databases
// in a temporary directory, its RpcServer listens on 127.0.0.1, and its
// one-thread io_context is run by the harness thread. Each input is one
// connection (tests/fuzz/rpc_driver.h gives the input format): raw bytes
// before the handshake, or frames for the master's methods after it. State
// carries over between inputs (files created, workers registered, jobs
// submitted), as it would on a long-lived master.
//
// Checks: the server closes the connection and never hangs; before
// authentication it sends only its Hello and at most one error; after it,
// each request gets one reply in order, and an OK reply parses as the
// method's reply message (MR_FUZZ_VERBOSE=1 prints each request's
// status, to check what a seed reaches). ASan, UBSan and LeakSanitizer do the rest.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "master/master.h"
#include "proto/cluster.pb.h"
#include "proto/dfs.pb.h"
#include "proto/job.pb.h"
#include "tests/fuzz/rpc_driver.h"

namespace mr::fuzz {
namespace {

constexpr int kTimeoutMs = 5000;

// The master's methods, in the order of master.cc's RegisterHandlers, with
// their reply messages. Record byte 0 indexes this table: append only, so
// the corpus keeps its meaning.
struct Method {
  std::string name;
  std::function<std::unique_ptr<google::protobuf::MessageLite>()> reply;
};
template <typename Reply>
Method M(std::string name) {
  return {std::move(name), [] { return std::make_unique<Reply>(); }};
}
const std::vector<Method>& Methods() {
  static const auto* methods = new std::vector<Method>{
      M<pb::RegisterReply>("cluster.Register"),   M<pb::HeartbeatReply>("cluster.Heartbeat"),
      M<pb::ClusterStatusReply>("cluster.Status"), M<pb::Empty>("dfs.Mkdir"),
      M<pb::ListReply>("dfs.List"),               M<pb::StatReply>("dfs.Stat"),
      M<pb::Empty>("dfs.Delete"),                 M<pb::Empty>("dfs.Rename"),
      M<pb::CreateFileReply>("dfs.Create"),       M<pb::AddBlockReply>("dfs.AddBlock"),
      M<pb::Empty>("dfs.CompleteBlock"),          M<pb::Empty>("dfs.CompleteFile"),
      M<pb::Empty>("dfs.AbandonFile"),            M<pb::Empty>("dfs.BadReplica"),
      M<pb::SubmitJobReply>("job.Submit"),        M<pb::JobRecord>("job.Show"),
      M<pb::JobListReply>("job.List"),            M<pb::Empty>("job.Kill"),
      M<pb::HistoryReply>("job.History"),         M<pb::MapOutputsReply>("job.MapOutputs"),
      M<pb::Empty>("job.FetchFailed"),           M<pb::BlockReportReply>("cluster.BlockReport"),
  };
  return *methods;
}

// The cluster: three workers in two datacenters that never run (the
// fuzzer speaks for them with cluster.Register and cluster.Heartbeat).
ClusterConfig MakeConfig(const std::string& dir) {
  ClusterConfig c;
  c.cluster.name = "fuzz";
  c.cluster.secret = kSecret;
  c.cluster.rpc_timeout_ms = kTimeoutMs;
  c.master.address = {"127.0.0.1", 0};
  c.master.data_dir = dir + "/master";
  c.dfs.placement_seed = 1;
  const char* dcs[] = {"dc1", "dc1", "dc2"};
  for (int i = 0; i < 3; ++i) {
    WorkerOptions w;
    w.id = "w" + std::to_string(i + 1);
    w.address = {"127.0.0.1", static_cast<uint16_t>(7001 + i)};
    w.datacenter = dcs[i];
    w.data_dir = dir + "/" + w.id;
    c.workers.push_back(w);
  }
  return c;
}

// The newest id of each kind an OK reply of this connection gave.
struct Ids {
  uint64_t lease = 0, block = 0;
  int64_t job = 0;
};

Ids NewestIds(const std::vector<pb::Frame>& replies, const std::vector<FuzzFrame>& sent) {
  Ids ids;
  for (size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].status_code() != 0) continue;
    const std::string& m = sent[i].method;
    if (m == "dfs.Create") {
      pb::CreateFileReply r;
      if (r.ParseFromString(replies[i].body())) ids.lease = r.lease_id();
    } else if (m == "dfs.AddBlock") {
      pb::AddBlockReply r;
      if (r.ParseFromString(replies[i].body())) ids.block = r.block_id();
    } else if (m == "job.Submit") {
      pb::SubmitJobReply r;
      if (r.ParseFromString(replies[i].body())) ids.job = r.job_id();
    }
  }
  return ids;
}

// Sets `m`'s id fields from `ids`, if its body parses.
template <typename Message, typename Set>
void Rewrite(FuzzFrame& f, Set set) {
  Message m;
  if (!m.ParseFromString(f.body)) return;
  set(m);
  f.body = m.SerializeAsString();
}

// A frame with flags & 0x40 gets the lease, block or job id the server gave
// earlier on this connection, which a mutation would not guess: so
// Create → AddBlock → CompleteBlock → CompleteFile and Submit → Show → Kill
// are reachable.
std::vector<FuzzFrame>* g_sent = nullptr;
void Repair(FuzzFrame& f, const std::vector<pb::Frame>& replies) {
  if (!(f.flags & 0x40)) return;
  const Ids ids = NewestIds(replies, *g_sent);
  const std::string& m = f.method;
  if (m == "dfs.AddBlock") {
    Rewrite<pb::AddBlockRequest>(f, [&](auto& r) { r.set_lease_id(ids.lease); });
  } else if (m == "dfs.CompleteBlock") {
    Rewrite<pb::CompleteBlockRequest>(f, [&](auto& r) {
      r.set_lease_id(ids.lease);
      r.set_block_id(ids.block);
    });
  } else if (m == "dfs.CompleteFile") {
    Rewrite<pb::CompleteFileRequest>(f, [&](auto& r) { r.set_lease_id(ids.lease); });
  } else if (m == "dfs.AbandonFile") {
    Rewrite<pb::AbandonFileRequest>(f, [&](auto& r) { r.set_lease_id(ids.lease); });
  } else if (m == "dfs.BadReplica") {
    Rewrite<pb::BadReplicaRequest>(f, [&](auto& r) { r.set_block_id(ids.block); });
  } else if (m == "job.Show" || m == "job.Kill") {
    Rewrite<pb::JobIdRequest>(f, [&](auto& r) { r.set_job_id(ids.job); });
  } else if (m == "job.MapOutputs") {
    Rewrite<pb::MapOutputsRequest>(f, [&](auto& r) { r.set_job_id(ids.job); });
  } else if (m == "job.FetchFailed") {
    Rewrite<pb::FetchFailedRequest>(f, [&](auto& r) { r.set_job_id(ids.job); });
  }
}

struct Harness {
  asio::io_context io{1};
  std::string dir;
  std::unique_ptr<master::Master> master;
  std::unique_ptr<Driver> driver;
  std::vector<std::string> names;
};

Harness* g_harness = nullptr;

}  // namespace
}  // namespace mr::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace mr::fuzz;
  spdlog::set_level(spdlog::level::off);
  auto* h = new Harness;
  h->dir = MakeTempDir("mr-fuzz-master");
  g_harness = h;
  auto master = mr::master::Master::Create(MakeConfig(h->dir), h->io);
  if (!master.ok()) Fail("Master::Create: " + master.status().ToString());
  h->master = std::move(master).value();
  if (auto s = h->master->Start(); !s.ok()) Fail("Master::Start: " + s.ToString());
  h->driver = std::make_unique<Driver>(h->io, h->master->port(), kTimeoutMs);
  for (const auto& m : Methods()) h->names.push_back(m.name);
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
  g_sent = &frames;  // Repair() reads the methods of the frames sent so far
  const std::vector<mr::pb::Frame> replies = h.driver->PostAuthLockstep(frames, Repair);
  static const bool verbose = std::getenv("MR_FUZZ_VERBOSE") != nullptr;
  for (size_t i = 0; i < replies.size(); ++i) {
    if (verbose) {
      std::fprintf(stderr, "%s -> %d %s\n", frames[i].method.c_str(), replies[i].status_code(),
                   replies[i].status_message().c_str());
    }
    if (replies[i].status_code() != 0) continue;
    const Method* method = nullptr;
    for (const auto& m : Methods()) {
      if (m.name == frames[i].method) method = &m;
    }
    if (!method) Fail("OK reply to unknown method '" + frames[i].method + "'");
    if (!method->reply()->ParseFromString(replies[i].body())) {
      Fail("OK reply to " + method->name + " does not parse");
    }
  }
  return 0;
}
