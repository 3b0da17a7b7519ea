// Worker: the DataNode half of mr-worker, and the host of its TaskTracker
// half (task_tracker.h). Start here for the worker. worker.cc has the
// master link, copies and repairs; block_server.cc the block streams.
//
// It stores blocks (dfs/block_store.h), serves "dn.ReadBlock" (any byte
// range of a block, from verified chunks, streamed to a reader) and "dn.WriteBlock" (store and forward down a
// replication pipeline), and keeps one connection to the master: it
// registers with a full block report, then heartbeats every interval with
// the blocks it gained, lost or quarantined since the last beat, and carries
// out what the reply asks (delete blocks, copy a block to other workers,
// repair a quarantined replica, register again, start or stop tasks). A task
// that ends, or a replica found corrupt, wakes the heartbeat at once.
//
// A replica found corrupt (by a read, a copy or the scrubber,
// dfs/block_scrubber.h) is quarantined, never deleted: it stays on disk and
// serves its good chunks until the master's RepairCommand has this worker
// fetch a good copy, which replaces it (docs/dfs.md, "A replica is corrupt").
//
// Threading: the io_context may be run by several threads; a connection's
// coroutine runs one step at a time, and the shared report queues are
// guarded by a mutex. The BlockStore is thread-safe.
#pragma once

#include <memory>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/member_view.h"
#include "common/rpc.h"
#include "dfs/block_scrubber.h"
#include "dfs/block_store.h"
#include "proto/cluster.pb.h"
#include "proto/dfs.pb.h"
#include "worker/disk_health.h"
#include "worker/task_tracker.h"
#include "worker/worker_metrics.h"

namespace mr::worker {

class Worker {
 public:
  // Opens the block store in <self.data_dir>/blocks. `self` is this
  // worker's identity (worker/identity.h: its [[worker]] entry and flags).
  static Result<std::unique_ptr<Worker>> Create(const ClusterConfig& config,
                                                const WorkerOptions& self, asio::io_context& io);
  // The same for the [[worker]] entry `id`; NotFound if there is none.
  static Result<std::unique_ptr<Worker>> Create(const ClusterConfig& config, const std::string& id,
                                                asio::io_context& io);
  ~Worker();

  // Listens on the worker's bind address (its advertised one by default)
  // and starts the master link.
  Status Start();
  void Stop();
  uint16_t port() const;
  // Not OK once the master refused this worker (its registration broke a
  // rule: docs/config.md, "Workers joining"; or the handshake failed on the
  // secret). The worker has stopped serving then; mr-worker exits with 2.
  Status refused() const;
  // Called (on an io thread) when the worker refuses to go on; mr-worker
  // stops its io_context there. Set before Start().
  void set_on_refused(std::function<void()> fn) { on_refused_ = std::move(fn); }

 private:
  Worker(const ClusterConfig& config, const WorkerOptions& self, asio::io_context& io);

  awaitable<void> MasterLoop();
  // Sets *refused when the master refused the registration for good.
  awaitable<Status> RegisterAndBeat(Connection& master, bool* refused);
  awaitable<Status> ServeReadBlock(ServerCall& call);
  awaitable<Status> ServeWriteBlock(ServerCall& call);
  awaitable<void> CopyBlock(pb::TransferCommand command);
  awaitable<void> RepairBlock(pb::RepairCommand command);
  // Reads the whole local replica, verifying every chunk (yielding between
  // frames so other connections are served). OK, Corruption, or NotFound.
  awaitable<Status> VerifyLocal(uint64_t id);

  // A replica found corrupt (any thread): quarantined here, reported in the
  // next beat, which is sent at once.
  void QuarantineReplica(uint64_t id, const Status& why);
  void NoteReceived(uint64_t id, int64_t bytes);
  // The master's list of members, whole or a delta (on the master strand,
  // from the register and heartbeat replies; common/member_view.h): the TLS
  // policy learns their datacenters (docs/tls.md), and Peers() the ones
  // declared `dead`, so every transfer to them is let go at once
  // (common/peer_registry.h).
  void LearnMembers(const google::protobuf::RepeatedPtrField<pb::WorkerInfo>& members,
                    const google::protobuf::RepeatedPtrField<std::string>& dead,
                    uint64_t version, bool delta);
  // Logs the blocks the store dropped at open (Create).
  void LogDroppedAtOpen() const;
  // Asks for a heartbeat now (any thread).
  void Wake();

  ClusterConfig config_;
  WorkerOptions self_;
  asio::io_context& io_;
  RpcOptions rpc_options_;
  std::unique_ptr<dfs::BlockStore> store_;
  std::unique_ptr<DiskHealth> disk_;   // reported in every heartbeat
  WorkerMetrics metrics_;  // before server_ and tasks_, which count into it
  std::unique_ptr<RpcServer> server_;
  std::unique_ptr<HttpServer> http_;  // /metrics; null when http_address is unset
  std::atomic<bool> stopped_{false};
  std::shared_ptr<Connection> master_conn_;
  // The master link runs on this strand, so Wake() can cancel its timer.
  asio::strand<asio::io_context::executor_type> strand_;
  asio::steady_timer* beat_timer_ = nullptr;  // on the strand
  std::atomic<bool> wake_{false};
  MemberView members_;  // on the strand: the master's members, as its replies told them
  std::unique_ptr<TaskTracker> tasks_;
  std::unique_ptr<dfs::BlockScrubber> scrubber_;  // null when [dfs] scrub_interval_s = 0

  mutable std::mutex mu_;              // guards the report queues and repairing_
  // Each block id is in at most one queue: its latest change wins.
  std::vector<pb::BlockRef> received_;
  std::vector<uint64_t> removed_;
  std::vector<uint64_t> quarantined_;
  std::set<uint64_t> repairing_;       // repairs under way
  Status refused_;                     // guarded by mu_
  std::function<void()> on_refused_;
};

}  // namespace mr::worker
