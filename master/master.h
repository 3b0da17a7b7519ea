// Master: mr-master's NameNode half, and the host of its JobTracker half
// (job_tracker.h). Start here for the master.
//
// It keeps
//   - membership (membership.cc): every worker that registered and proved
//     it belongs (the secret; [[worker]] entries, when any, as an
//     allow-list), with its labels, persisted in the namespace RocksDB; its
//     liveness by heartbeat (dead after `dead_after_missed_heartbeats`); and
//     decommissioning: a draining worker takes no new blocks or tasks, and
//     becomes `decommissioned` once every block it holds has its
//     replication on other workers;
//   - the namespace (dfs/namespace.h, persisted in RocksDB);
//   - soft state rebuilt from block reports: block → live replica nodes;
//   - files under construction ("leases"), which never appear in the
//     namespace until CompleteFile. A lease id is this run's epoch (a count
//     of master starts, persisted in the namespace) << 40 | a counter, so no
//     two runs share one; each lease also names its file and its client,
//     and every lease RPC must repeat both (FindLease);
// and it re-replicates blocks that lost replicas, by asking a worker holding
// one to copy it (TransferCommand in the heartbeat reply), and has corrupt
// replicas repaired in place (RepairCommand; replica_repair.cc).
//
// Threading: every handler and timer runs on the one-thread io_context given
// to Create(), so the state needs no locks (nor does the hosted scheduler).
// Only the namespace's synced writes run on a thread of their own, in
// groups; every reply waits for the sync of what came before it
// (dfs/group_commit.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "common/config.h"
#include "common/http_server.h"
#include "common/loop_lag.h"
#include "common/rpc.h"
#include "dfs/namespace.h"
#include "dfs/placement.h"
#include "proto/cluster.pb.h"
#include "proto/dfs.pb.h"
#include "master/clock.h"
#include "master/job_tracker.h"
#include "master/metrics.h"
#include "master/replica_list.h"

namespace mr::master {

class Master {
 public:
  // Opens the namespace in <master.data_dir>/namespace and validates the
  // placement policy. Does not listen yet.
  // Every time-dependent rule (liveness, leases, re-replication and repair
  // waits, and the JobTracker's) reads `clock` (not owned; outlives this).
  static Result<std::unique_ptr<Master>> Create(const ClusterConfig& config,
                                                asio::io_context& io,
                                                const Clock* clock = SystemClock::Get());
  ~Master();

  // Listens on master.address (port 0 = any free port) and starts serving.
  Status Start();
  // Stops serving; pending work is dropped (the namespace is already durable).
  void Stop();
  uint16_t port() const;
  // The status server's port (master.http_address), 0 when off.
  uint16_t http_port() const;

 private:
  struct WorkerState;
  struct BlockState;
  struct BlockTrouble;
  struct Lease;
  class CopyTargets;
  // Time points of the master's rules, read through clock_ (clock.h).
  using Steady = std::chrono::steady_clock;
  Steady::time_point Now() const {
    return Steady::time_point(std::chrono::milliseconds(clock_->NowMs()));
  }

  Master(const ClusterConfig& config, asio::io_context& io, const Clock* clock);
  void RegisterHandlers();
  awaitable<void> Tick();
  awaitable<void> PolicyTick();
  void CheckLiveness();
  void ExpireLeases();
  void ScheduleReplication();
  // One block of ScheduleReplication; true while it still needs attention.
  bool ReviewBlock(uint64_t id, BlockState& b, CopyTargets& nodes, Steady::time_point now);
  // Whether `b` may need a copy or a trim: what keeps it in attention_.
  bool NeedsAttention(uint64_t id, const BlockState& b) const;
  // `id`'s replicas or replication changed: the next ScheduleReplication
  // looks at it (attention_).
  void Attend(uint64_t id) { attention_.insert(id); }
  // Every block's: a worker started or stopped draining, so replicas
  // counted anywhere may have changed; the next pass reviews them all.
  void ReviewAll() { review_all_ = true; }
  // Calls `fn` for each complete block with fewer in-service replicas than
  // its replication, while it returns true. They are all in attention_ or
  // troubled_: every block is walked only until the first review after a
  // start or a change of draining.
  void ForEachUnderReplicated(const std::function<bool(uint64_t, const BlockState&)>& fn) const;
  // Complete blocks, and the under-replicated among them (cluster.Status,
  // /metrics). Exact while the blocks to look at are at most
  // kExactCountWalk; past that (right after a start, or after a worker with
  // many blocks died) the under-replicated count is refreshed at most once
  // per heartbeat interval, or per ten times its walk's last duration if
  // longer: a client polling cluster.Status must not make the master walk
  // millions of blocks per call (a walk of 10,000,000 takes seconds).
  struct BlockCounts {
    int64_t complete = 0;
    int64_t under_replicated = 0;
  };
  BlockCounts CountBlocks();
  static constexpr size_t kExactCountWalk = 100000;
  void TrimReplicas(uint64_t id, BlockState& b);
  void OrderCopy(uint64_t id, BlockState& b, int counted, CopyTargets& nodes, Steady::time_point now);
  void CopyFailed(uint64_t id, const BlockTrouble& t, Steady::time_point now);
  // The side state of a troubled block (replica_repair.cc): Trouble makes
  // it; FindTrouble and Corrupt read it (null, or an empty list, when the
  // block has none); DropTroubleIfIdle removes it once it says nothing a
  // missing entry would not.
  BlockTrouble& Trouble(uint64_t id, BlockState& b);
  const BlockTrouble* FindTrouble(uint64_t id, const BlockState& b) const;
  BlockTrouble* FindTrouble(uint64_t id, const BlockState& b);
  const ReplicaList& Corrupt(uint64_t id, const BlockState& b) const;
  void DropTroubleIfIdle(uint64_t id, BlockState& b, Steady::time_point now);
  // Corrupt replicas (replica_repair.cc).
  void ScheduleRepairs();
  void NoteCorrupt(uint64_t block, const std::string& node, const std::string& why);
  int CountedReplicas(uint64_t id, const BlockState& b) const;
  // Membership (membership.cc).
  Status Admit(const pb::RegisterRequest& req) const;
  WorkerState& KnowWorker(const pb::KnownWorker& known);
  Status PersistWorker(const WorkerState& w);
  // A worker's address and labels changed (or it is new): tell the TLS
  // policy, then MemberChanged.
  void MembershipChanged(WorkerState& w);
  // `w`'s entry in the members' list changed (its info, or it was declared
  // dead, or one declared dead registered again): bump membership_version_
  // and file `w` under it in member_changes_.
  void MemberChanged(WorkerState& w);
  // The members for the reply to a worker whose list is of version
  // `theirs` (0: it has none): only those changed since `theirs` when
  // `deltas` (the worker applies deltas) and `theirs` is a version of this
  // run not ahead of the master's; else every member. Returns true for a
  // delta. Called by Register (theirs = 0) and Heartbeat for their replies.
  bool FillMembers(uint64_t theirs, bool deltas,
                   google::protobuf::RepeatedPtrField<pb::WorkerInfo>* members,
                   google::protobuf::RepeatedPtrField<std::string>* dead) const;
  Status Decommission(const std::string& id, bool drain);
  void CheckDecommissions();
  std::vector<int64_t> BlocksWaiting(const std::vector<WorkerState*>& draining) const;
  bool Draining(const std::string& node) const;
  // Draining by worker number (draining_), and what keeps it current.
  bool DrainingNumber(NodeNum n) const;
  void NoteAdminState(const WorkerState& w);
  // Every change of a worker's admin_state goes through here.
  void SetAdminState(WorkerState& w, std::string state);
  // `b`'s good copies on in-service workers.
  int InService(const BlockState& b) const;

  // Handlers.
  Status Register(const pb::RegisterRequest& req, pb::RegisterReply* reply);
  Status BlockReport(const pb::BlockReportRequest& req, pb::BlockReportReply* reply);
  // One part of a worker's full block report: its replicas recorded, ids
  // the namespace does not know added to `orphans`. Returns the known ones.
  int64_t TakeBlockReport(WorkerState& w, const google::protobuf::RepeatedPtrField<pb::BlockRef>& good,
                          const google::protobuf::RepeatedPtrField<pb::BlockRef>& quarantined,
                          google::protobuf::RepeatedField<uint64_t>* orphans);
  // Whether a live worker's report is still arriving in parts: until it is
  // in, its blocks not yet reported look lost, so no copy is ordered for
  // them and no draining worker is declared done (ScheduleReplication,
  // CheckDecommissions).
  bool ReportsUnderway() const { return reports_underway_ > 0; }
  void SetReporting(WorkerState& w, bool reporting);
  // Heard from `w` (registration, heartbeat, a part of its report): live
  // until dead_after_missed_heartbeats intervals pass without another.
  void Heard(WorkerState& w);
  Status Heartbeat(const pb::HeartbeatRequest& req, pb::HeartbeatReply* reply);
  Status ClusterStatus(pb::ClusterStatusReply* reply);
  Status Mkdir(const pb::PathRequest& req);
  Status List(const pb::PathRequest& req, pb::ListReply* reply);
  Status Stat(const pb::LocateRequest& req, pb::StatReply* reply);
  Status Delete(const pb::PathRequest& req);
  Status Rename(const pb::RenameRequest& req);
  Status SetReplication(const pb::SetReplicationRequest& req, pb::SetReplicationReply* reply);
  Status Create(const pb::CreateFileRequest& req, pb::CreateFileReply* reply);
  Status AddBlock(const pb::AddBlockRequest& req, pb::AddBlockReply* reply);
  Status CompleteBlock(const pb::CompleteBlockRequest& req);
  Status CompleteFile(const pb::CompleteFileRequest& req);
  Status AbandonFile(const pb::AbandonFileRequest& req);
  Status CheckReplication(int asked) const;
  Status BadReplica(const pb::BadReplicaRequest& req);
  void RegisterJobHandlers();

  // The status pages and /metrics (status_http.cc, job_pages.h).
  Status StartHttp();
  HttpResponse ServeHttp(const HttpRequest& req);
  std::string ClusterPage();
  HttpResponse DfsPage(const HttpRequest& req);
  // POST /job/ID/kill from the job page's kill button (docs/status-page.md).
  HttpResponse KillFromPage(int64_t id, const HttpRequest& req);
  std::string MetricsText();
  void SetDfsGauges(const WorkerState& w, const prometheus::Labels& labels);

  // State helpers.
  // `w` holds a good copy of `block` (no longer a corrupt one).
  void AddReplica(uint64_t block, BlockState& b, WorkerState& w);
  void RemoveReplica(uint64_t block, const std::string& node);
  void ForgetBlocks(const std::vector<uint64_t>& blocks);
  // Forgets what the workers held (they died, or restarted): one pass over
  // the block map for all of them.
  void MarkDead(const std::vector<WorkerState*>& dead);
  // Live workers that can write: the candidates for new blocks and copies.
  // In byte order of their ids.
  std::vector<dfs::PlacementNode> LiveNodes() const;
  pb::ReplicaLocation Location(const std::string& node) const;
  std::vector<std::string> SortByDistance(std::vector<std::string> nodes,
                                          const std::string& reader, uint64_t salt) const;
  // The same for a reader that may be no worker but says where it runs.
  std::vector<std::string> SortByDistance(std::vector<std::string> nodes, const std::string& reader,
                                          const std::string& reader_dc,
                                          const std::string& reader_rack, uint64_t salt) const;
  Result<Lease*> FindLease(uint64_t lease_id, const std::string& path,
                           const std::string& client_id);
  void DropLease(uint64_t lease_id);

  ClusterConfig config_;
  asio::io_context& io_;
  MasterMetrics metrics_;  // before server_: its call observer counts into it
  std::unique_ptr<RpcServer> server_;
  std::unique_ptr<HttpServer> http_;  // null when master.http_address is unset
  std::unique_ptr<LoopLagProbe> loop_lag_;  // into metrics_ (mr_loop_lag_seconds)
  // Random, made at StartHttp: the job pages' kill forms carry it, and a
  // kill POST without it is refused (a page of another site cannot read it).
  std::string kill_token_;
  std::unique_ptr<dfs::Namespace> namespace_;
  std::unique_ptr<dfs::PlacementPolicy> placement_;
  // The job half: hosts the scheduler named in [scheduler].
  std::unique_ptr<JobTracker> jobs_;
  std::mt19937_64 rng_;
  std::unordered_map<std::string, std::unique_ptr<WorkerState>> workers_;
  std::vector<bool> draining_;  // by NodeNum: the worker's admin_state is not ""
  // Each live worker's last heartbeat (clock_ ms) by NodeNum, kNotLive for
  // the others: CheckLiveness scans this flat array, 8 bytes a worker, not
  // workers_ (at 4,000 workers that walk, cache misses mostly, took 2-5 ms
  // of every pass; issue 29). Kept by Heard and MarkDead.
  std::vector<int64_t> heard_ms_;
  static constexpr int64_t kNotLive = INT64_MIN;
  // Live workers whose report is arriving in parts (WorkerState::reporting).
  int reports_underway_ = 0;
  std::vector<std::string> worker_order_;  // ids in workers_, in natural order ("w2" < "w10")
  // The same ids in byte order: LiveNodes' order, which placement need not
  // sort again (dfs/placement.cc).
  std::vector<std::string> placement_order_;
  absl::flat_hash_map<uint64_t, BlockState> blocks_;
  // The blocks being copied or repaired (BlockState::troubled): a few.
  absl::flat_hash_map<uint64_t, BlockTrouble> troubled_;
  // The blocks whose replica count may differ from their replication (too
  // few, or a surplus): all ScheduleReplication visits besides troubled_,
  // so a tick costs O(blocks needing work), not O(blocks). A block enters
  // when it completes, loses a replica, gains one past its replication, or
  // its replication changes (Attend); every block is reviewed after a start and when a
  // worker's draining changes (review_all_). It leaves once it has its
  // replication. HDFS keeps the same set for its replication monitor
  // (BlockManager's neededReconstruction queues).
  absl::flat_hash_set<uint64_t> attention_;
  bool review_all_ = true;
  // The time of the master's thread one ScheduleReplication may take
  // ordering copies; the blocks left wait for the next pass.
  static constexpr std::chrono::milliseconds kReplicationBudget{10};
  int64_t complete_blocks_ = 0;  // blocks_ entries with `complete`
  int64_t under_counted_ = 0;    // CountBlocks' last walk, when, and how long it took
  std::chrono::steady_clock::time_point under_counted_at_{};
  std::chrono::steady_clock::duration under_count_took_{};
  std::unordered_map<uint64_t, std::unique_ptr<Lease>> leases_;
  uint64_t next_lease_id_ = 1;
  uint64_t epoch_ = 0;  // this run's number (Namespace::NextEpoch), the top bits of lease ids
  // Bumped whenever a member's entry changes (MemberChanged); the epoch in
  // the top bits, so a worker's version from before a restart never matches.
  uint64_t membership_version_ = 0;
  // Every known worker once, under the version of its entry's latest change:
  // the delta since version V is the workers filed after V (FillMembers),
  // so a worker hears of each change once, not the whole list per change
  // (issue 29: O(workers²) entries while a fleet joins). Never larger than
  // workers_, so no version of this run is too old for a delta.
  std::map<uint64_t, std::string> member_changes_;
  Steady::time_point started_;
  const Clock* clock_;
  bool stopped_ = false;
  // Copies ordered by ScheduleReplication that never arrived: logged at most
  // once per kCopyFailureLogMs, with how many went unlogged meanwhile.
  Steady::time_point copy_failure_logged_;
  int copy_failures_unlogged_ = 0;
  bool policy_tick_running_ = false;  // PolicyTick is looping
};

}  // namespace mr::master
