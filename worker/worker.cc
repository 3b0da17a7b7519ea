#include "worker/worker.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <map>

#include <spdlog/spdlog.h>

#include "common/metrics.h"
#include "common/peer_registry.h"
#include "dfs/block_report.h"
#include "dfs/client.h"
#include "dfs/wire_codec.h"

namespace mr::worker {
namespace {

// Drops `id` from a report queue (a later change of the block replaces it).
void Forget(std::vector<uint64_t>& queue, uint64_t id) {
  queue.erase(std::remove(queue.begin(), queue.end(), id), queue.end());
}
void Forget(std::vector<pb::BlockRef>& queue, uint64_t id) {
  queue.erase(std::remove_if(queue.begin(), queue.end(), [id](const auto& b) { return b.id() == id; }),
              queue.end());
}

}  // namespace

Worker::Worker(const ClusterConfig& config, const WorkerOptions& self, asio::io_context& io)
    : config_(config), self_(self), io_(io),
      rpc_options_(RpcOptions::FromConfig(config, "worker " + self.id)),
      strand_(asio::make_strand(io)) {}

// The scrubber's callback uses the report queues: stop it before they go.
Worker::~Worker() {
  if (scrubber_) scrubber_->Stop();
}

Result<std::unique_ptr<Worker>> Worker::Create(const ClusterConfig& config, const std::string& id,
                                               asio::io_context& io) {
  const WorkerOptions* self = config.FindWorker(id);
  if (!self) return Status::NotFound("worker '" + id + "' is not in the cluster file");
  return Create(config, *self, io);
}

Result<std::unique_ptr<Worker>> Worker::Create(const ClusterConfig& config,
                                               const WorkerOptions& self_options,
                                               asio::io_context& io) {
  const WorkerOptions* self = &self_options;
  if (config.ResolvedSecret().empty() && (!IsLoopbackHost(self->address.host) ||
                                          !IsLoopbackHost(self->listen_address().host))) {
    return Status::InvalidArgument("refusing to serve on non-loopback address " +
                                   self->listen_address().ToString() + " (advertised " +
                                   self->address.ToString() + ") without a cluster secret");
  }
  std::unique_ptr<Worker> w(new Worker(config, *self, io));
  dfs::BlockStore::Options options;
  options.fsync = config.dfs.fsync;
  options.capacity_bytes = self->capacity_bytes;
  MR_ASSIGN_OR_RETURN(w->store_, dfs::BlockStore::Open(self->data_dir + "/blocks", options));
  w->disk_ = std::make_unique<DiskHealth>(self->data_dir, self->min_free_bytes,
                                         config.dfs.block_size);
  w->LogDroppedAtOpen();
  Worker* raw = w.get();
  w->tasks_ = std::make_unique<TaskTracker>(config, *self, *w->store_, *w->disk_,
                                            [raw] { raw->Wake(); });
  return w;
}

Status Worker::Start() {
  // The block server sends with sendfile(2), which has no MSG_NOSIGNAL: a
  // reader that hung up must give EPIPE, not end the process. (Task
  // children are spawned with every signal back at its default.)
  ::signal(SIGPIPE, SIG_IGN);
  server_ = std::make_unique<RpcServer>(io_.get_executor(), rpc_options_, "worker " + self_.id);
  server_->Handle("dn.ReadBlock", [this](ServerCall& c) { return ServeReadBlock(c); });
  server_->Handle("dn.WriteBlock", [this](ServerCall& c) { return ServeWriteBlock(c); });
  tasks_->RegisterHandlers(*server_);
  tasks_->set_metrics(&metrics_);
  CountRpcs(*server_, metrics_.registry());
  MR_RETURN_IF_ERROR(server_->Listen(self_.listen_address()));
  MR_ASSIGN_OR_RETURN(http_, ServeWorkerMetrics(io_.get_executor(), config_, self_, metrics_));
  server_->Start();
  asio::co_spawn(strand_, MasterLoop(), asio::detached);
  if (config_.dfs.scrub_interval_s > 0) {
    dfs::BlockScrubber::Options scrub;
    scrub.interval = std::chrono::seconds(config_.dfs.scrub_interval_s);
    scrub.bytes_per_second = config_.dfs.scrub_bytes_per_second;
    scrubber_ = std::make_unique<dfs::BlockScrubber>(
        *store_, scrub, [this](uint64_t id, const Status& why) { QuarantineReplica(id, why); });
    scrubber_->Start();
  }
  spdlog::info("worker {} in {}{}{} listening on {}:{} (advertised {}) with {} blocks ({} bytes)",
               self_.id, self_.datacenter, self_.rack.empty() ? "" : "/", self_.rack,
               self_.listen_address().host, server_->port(), self_.address.ToString(),
               store_->List().size(), store_->used_bytes());
  return Status::OK();
}

void Worker::Stop() {
  stopped_ = true;
  if (scrubber_) scrubber_->Stop();
  if (server_) server_->Stop();
  if (http_) http_->Stop();
  asio::post(strand_, [this] {
    if (master_conn_) master_conn_->Close();
    if (beat_timer_) beat_timer_->cancel();
  });
}

void Worker::Wake() {
  wake_ = true;
  asio::post(strand_, [this] {
    if (beat_timer_) beat_timer_->cancel();
  });
}

uint16_t Worker::port() const { return server_ ? server_->port() : 0; }

Status Worker::refused() const {
  std::lock_guard lock(mu_);
  return refused_;
}

// ---------------------------------------------------------------- master link

// Connects, registers, heartbeats; on any failure waits one interval and
// starts over (a restarted master is found again this way).
awaitable<void> Worker::MasterLoop() {
  asio::steady_timer timer(strand_);
  bool warned = false;
  while (!stopped_) {
    auto conn = co_await Connect(config_.master.address, rpc_options_);
    Status s = conn.status();
    // A master that does not share our secret refuses every try alike.
    bool refused = s.IsPermissionDenied();
    if (conn.ok()) {
      master_conn_ = std::move(conn).value();
      warned = false;
      s = co_await RegisterAndBeat(*master_conn_, &refused);
      master_conn_->Close();
    }
    if (stopped_) break;
    if (refused) {
      spdlog::error("the master refused this worker: {}", s.message());
      {
        std::lock_guard lock(mu_);
        refused_ = s;
      }
      Stop();
      if (on_refused_) on_refused_();
      break;
    }
    if (!warned || !s.IsUnavailable()) {
      spdlog::warn("master link: {}; retrying every {} ms", s.ToString(),
                   config_.cluster.heartbeat_interval_ms);
      warned = true;
    }
    timer.expires_after(std::chrono::milliseconds(config_.cluster.heartbeat_interval_ms));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

awaitable<Status> Worker::RegisterAndBeat(Connection& master, bool* refused) {
  pb::RegisterRequest reg;
  pb::SharedSettings* shared = reg.mutable_settings();
  shared->set_cluster_name(config_.cluster.name);
  shared->set_block_size(config_.dfs.block_size);
  shared->set_transfer_chunk_bytes(config_.dfs.transfer_chunk_bytes);
  shared->set_max_frame_bytes(config_.cluster.max_frame_bytes);
  shared->set_heartbeat_interval_ms(config_.cluster.heartbeat_interval_ms);
  shared->set_rpc_timeout_ms(config_.cluster.rpc_timeout_ms);
  pb::WorkerInfo* info = reg.mutable_worker();
  info->set_id(self_.id);
  info->set_address(self_.address.ToString());
  info->set_datacenter(self_.datacenter);
  info->set_rack(self_.rack);
  info->set_map_slots(self_.map_slots);
  info->set_reduce_slots(self_.reduce_slots);
  info->set_capacity_bytes(self_.capacity_bytes);
  {
    // Everything stored is in the full report; start the incremental queues afresh.
    std::lock_guard lock(mu_);
    received_.clear();
    removed_.clear();
    quarantined_.clear();
  }
  for (const auto& b : store_->List()) {
    pb::BlockRef* ref = b.quarantined ? reg.add_quarantined_blocks() : reg.add_blocks();
    ref->set_id(b.id);
    ref->set_bytes(b.bytes);
  }
  reg.set_used_bytes(store_->used_bytes());
  const int64_t good = reg.blocks_size(), quarantined = reg.quarantined_blocks_size();
  std::vector<pb::BlockReportRequest> parts =
      dfs::SplitBlockReport(&reg, dfs::BlockReportPartSize(config_.cluster.max_frame_bytes));
  pb::RegisterReply registered;
  // Running attempts stop (the master runs them again); finished maps'
  // outputs are offered to the master, which may take them back.
  for (pb::TaskReport& held : tasks_->Reconnect()) *reg.add_held_map_outputs() = std::move(held);
  Status s = co_await master.Call("cluster.Register", reg, &registered);
  if (!s.ok()) {
    // The master's rules (master/membership.cc) answer with these codes; a
    // broken link or a master still starting answers otherwise.
    *refused = s.IsInvalidArgument() || s.IsPermissionDenied() || s.IsAlreadyExists() ||
               s.IsFailedPrecondition();
    co_return s;
  }
  LearnMembers(registered.members(), registered.dead_members(), registered.membership_version(),
               /*delta=*/false);
  tasks_->ForgetJobs(registered.finished_jobs());
  int64_t orphans = registered.delete_blocks_size();
  for (uint64_t id : registered.delete_blocks()) store_->Remove(id);
  // The rest of the report, a frame at a time, before the first heartbeat.
  for (const pb::BlockReportRequest& part : parts) {
    pb::BlockReportReply answered;
    if (s = co_await master.Call("cluster.BlockReport", part, &answered); !s.ok()) co_return s;
    orphans += answered.delete_blocks_size();
    for (uint64_t id : answered.delete_blocks()) store_->Remove(id);
  }
  spdlog::info("registered with master {} ({} blocks, {} quarantined, in {} part{}; {} orphans deleted)",
               config_.master.address.ToString(), good, quarantined, parts.size() + 1,
               parts.empty() ? "" : "s", orphans);

  asio::steady_timer timer(strand_);
  beat_timer_ = &timer;
  struct Unset {
    asio::steady_timer*& timer;
    ~Unset() { timer = nullptr; }
  } unset{beat_timer_};
  while (!stopped_) {
    // Sleep one interval, unless a task ended meanwhile (Wake).
    if (!wake_.exchange(false)) {
      timer.expires_after(std::chrono::milliseconds(config_.cluster.heartbeat_interval_ms));
      co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      wake_ = false;
    }
    if (stopped_) break;
    pb::HeartbeatRequest beat;
    beat.set_worker_id(self_.id);
    beat.set_membership_version(members_.version());
    beat.set_member_deltas(true);
    tasks_->Fill(&beat);
    {
      std::lock_guard lock(mu_);
      for (auto& b : received_) *beat.add_received() = std::move(b);
      for (uint64_t id : removed_) beat.add_removed(id);
      for (uint64_t id : quarantined_) beat.add_quarantined(id);
      received_.clear();
      removed_.clear();
      quarantined_.clear();
    }
    beat.set_used_bytes(store_->used_bytes());
    const DiskHealth::State disk = disk_->Check();
    beat.set_free_bytes(disk.free_bytes);
    beat.set_disk_problem(disk.problem);
    pb::HeartbeatReply reply;
    s = co_await master.Call("cluster.Heartbeat", beat, &reply);
    if (!s.ok()) {
      // Put the reports back so the master learns them after reconnecting.
      std::lock_guard lock(mu_);
      for (const auto& b : beat.received()) received_.push_back(b);
      removed_.insert(removed_.end(), beat.removed().begin(), beat.removed().end());
      quarantined_.insert(quarantined_.end(), beat.quarantined().begin(), beat.quarantined().end());
      tasks_->Unsent(beat);
      co_return s;
    }
    if (reply.reregister()) co_return Status::Unavailable("master asked to register again");
    if (reply.membership_version() != 0) {  // set whenever the worker's version was stale
      LearnMembers(reply.members(), reply.dead_members(), reply.membership_version(),
                   reply.members_delta());
    }
    tasks_->Apply(reply);
    for (uint64_t id : reply.delete_blocks()) {
      MR_CO_RETURN_IF_ERROR(store_->Remove(id));
      spdlog::debug("deleted block {} as the master asked", id);
    }
    for (const auto& t : reply.transfers()) asio::co_spawn(io_, CopyBlock(t), asio::detached);
    for (const auto& r : reply.repairs()) asio::co_spawn(io_, RepairBlock(r), asio::detached);
  }
  co_return Status::OK();
}

void Worker::LearnMembers(const google::protobuf::RepeatedPtrField<pb::WorkerInfo>& members,
                          const google::protobuf::RepeatedPtrField<std::string>& dead,
                          uint64_t version, bool delta) {
  if (rpc_options_.tls) {
    for (const pb::WorkerInfo& m : members) {
      rpc_options_.tls->LearnNode(m.address(), m.datacenter());
    }
  }
  const MemberView::Change change = members_.Apply(members, dead, version, delta);
  if (delta && change.died.empty() && change.revived.empty()) return;  // no one's liveness changed
  std::map<std::string, std::string> gone;  // address → why
  for (const std::string& id : members_.DeadIds()) {
    const pb::WorkerInfo& m = members_.members().at(id).info;
    auto address = ParseHostPort(m.address());
    if (id == self_.id || !address.ok()) continue;
    gone[address->ToString()] =
        "worker " + m.id() + " (" + m.address() + ") was declared dead by the master";
  }
  const int abandoned = Peers().SetDead(std::move(gone));
  for (const std::string& id : change.died) {
    if (id == self_.id) continue;
    spdlog::warn("the master declared worker {} dead: transfers to it are let go ({} open "
                 "connections to dead workers closed)", id, abandoned);
  }
  for (const std::string& id : change.revived) {
    spdlog::info("worker {} is live again: transfers to it resume", id);
  }
}

void Worker::NoteReceived(uint64_t id, int64_t bytes) {
  std::lock_guard lock(mu_);
  Forget(received_, id);
  Forget(removed_, id);
  Forget(quarantined_, id);
  pb::BlockRef ref;
  ref.set_id(id);
  ref.set_bytes(bytes);
  received_.push_back(std::move(ref));
}

void Worker::QuarantineReplica(uint64_t id, const Status& why) {
  auto fresh = store_->Quarantine(id, why.message());
  if (!fresh.ok()) {
    if (!fresh.status().IsNotFound()) {
      spdlog::error("block {}: {}; cannot quarantine it: {}", id, why.ToString(),
                    fresh.status().ToString());
    }
    return;
  }
  if (!*fresh) return;  // already quarantined and reported
  spdlog::error("block {}: {}; replica quarantined (kept until a good copy replaces it)", id,
                why.ToString());
  {
    std::lock_guard lock(mu_);
    Forget(received_, id);
    Forget(quarantined_, id);
    quarantined_.push_back(id);
  }
  Wake();
}

void Worker::LogDroppedAtOpen() const {
  const auto& dropped = store_->dropped_at_open();
  for (const auto& d : dropped) {
    spdlog::warn("block {} ({:016x}) dropped at start: {}", d.id, d.id, d.reason);
  }
  if (!dropped.empty()) {
    spdlog::warn("block store: {} blocks dropped at start, {} kept; the dropped ones are left out "
                 "of the block report, so the master copies them again",
                 dropped.size(), store_->List().size());
  }
}

// Re-replication: stream a local replica down a pipeline of new holders.
awaitable<void> Worker::CopyBlock(pb::TransferCommand command) {
  const uint64_t id = command.block_id();
  auto reader = store_->OpenReader(id);  // one open file for the whole copy
  if (!reader.ok()) {
    if (reader.status().IsCorruption()) QuarantineReplica(id, reader.status());  // file missing
    spdlog::warn("cannot copy block {}: {}", id, reader.status().ToString());
    co_return;
  }
  std::vector<pb::ReplicaLocation> targets(command.targets().begin(), command.targets().end());
  Status local;  // a failure reading our own copy, as opposed to a target's failure
  dfs::ByteSource source = [&](int64_t offset, int64_t n, std::string* out) {
    local = (*reader)->ReadChunks(offset, n, out, nullptr);
    return local;
  };
  auto done = co_await dfs::WriteBlockPipeline(
      rpc_options_, id, targets, (*reader)->length(), config_.dfs.transfer_chunk_bytes, source,
      nullptr,
      targets.empty() ? 0
                      : dfs::LinkLevel(config_.cluster.inter_dc_zstd_level, self_.datacenter,
                                       targets.front().datacenter()));
  if (!done.ok()) {
    if (local.IsCorruption()) QuarantineReplica(id, local);
    spdlog::warn("copy of block {} to {} failed: {}", id, targets.front().node_id(),
                 done.status().ToString());
  } else {
    spdlog::info("copied block {} to {} node(s)", id, done->size());
  }
}

// Repair (RepairCommand): make the local replica good. A replica that is
// not quarantined is verified first (a reader may have blamed the network);
// if it verifies, it is announced as good again. Otherwise the block is
// fetched chunk by chunk from the sources (good replicas first, then
// damaged ones, this worker's own quarantined copy included: its good
// chunks count) into a new writer, whose commit replaces the quarantined
// copy only once the whole block has arrived and verified.
awaitable<void> Worker::RepairBlock(pb::RepairCommand command) {
  const uint64_t id = command.block_id();
  {
    std::lock_guard lock(mu_);
    if (!repairing_.insert(id).second) co_return;  // one repair of a block at a time
  }
  struct Done {
    Worker* w;
    uint64_t id;
    ~Done() {
      std::lock_guard lock(w->mu_);
      w->repairing_.erase(id);
    }
  } done{this, id};
  if (store_->Contains(id) && !store_->IsQuarantined(id)) {
    Status v = co_await VerifyLocal(id);
    auto length = store_->Length(id);
    if (v.ok() && length.ok()) {
      spdlog::info("block {}: local replica verified; reporting it good", id);
      NoteReceived(id, *length);
      Wake();
      co_return;
    }
    if (v.IsCorruption()) QuarantineReplica(id, v);
  }
  auto writer = store_->NewWriter(id);
  if (!writer.ok()) {
    spdlog::warn("cannot repair block {}: {}", id, writer.status().ToString());
    co_return;
  }
  pb::LocatedBlock located;
  located.set_id(id);
  located.set_bytes(command.bytes());
  *located.mutable_replicas() = command.sources();
  dfs::DfsClient client(config_.master.address, rpc_options_, config_.dfs.transfer_chunk_bytes);
  client.set_location({self_.id, self_.datacenter, self_.rack});
  client.set_inter_dc_zstd_level(config_.cluster.inter_dc_zstd_level);
  // The writer takes whole chunks; bytes arrive in frames of whole chunks,
  // but buffer anyway so any split works.
  std::string pending;
  dfs::ByteSink sink = [&](std::span<const char> data) {
    pending.append(data.data(), data.size());
    const size_t whole = pending.size() / dfs::kChecksumChunkBytes * dfs::kChecksumChunkBytes;
    if (whole == 0) return Status::OK();
    Status s = (*writer)->Append(std::span<const char>(pending.data(), whole));
    pending.erase(0, whole);
    return s;
  };
  Status s = co_await client.ReadBlock(located, 0, -1, sink);
  s = s.WithContext("reading it");
  if (s.ok() && !pending.empty()) s = (*writer)->Append(pending);
  if (s.ok()) s = (*writer)->Commit();
  if (!s.ok()) {
    spdlog::warn("repair of block {} failed (the master will order another): {}", id,
                 s.ToString());
    co_return;
  }
  spdlog::info("repaired block {}: fetched {} bytes from {} source(s); the quarantined copy is "
               "replaced",
               id, (*writer)->bytes_written(), command.sources_size());
  NoteReceived(id, (*writer)->bytes_written());
  Wake();
}

awaitable<Status> Worker::VerifyLocal(uint64_t id) {
  auto reader = store_->OpenReader(id);
  if (!reader.ok()) co_return reader.status();
  std::string data;
  const int64_t step = config_.dfs.transfer_chunk_bytes;
  for (int64_t offset = 0; offset < (*reader)->length(); offset += step) {
    MR_CO_RETURN_IF_ERROR((*reader)->ReadChunks(offset, step, &data, nullptr));
    co_await asio::post(io_, asio::use_awaitable);  // let other connections in
  }
  co_return Status::OK();
}

}  // namespace mr::worker
