#include "worker/worker.h"

#include <algorithm>
#include <chrono>

#include <boost/asio/experimental/concurrent_channel.hpp>
#include <spdlog/spdlog.h>

#include "common/metrics.h"
#include "dfs/client.h"
#include "dfs/wire_codec.h"

namespace mr::worker {
namespace {

// Ends a write stream with an error: tells the writer why, then returns the
// error so the server closes the connection (the writer may still be
// sending frames that must not be read as requests).
awaitable<Status> FailStream(Connection& conn, const Status& why) {
  co_await conn.SendError(why);
  co_return why;
}

// One frame of a dn.WriteBlock stream, checked against the stream's position.
struct InboundFrame {
  pb::Frame frame;
  pb::DataChunk chunk;
  std::string data;
};

// The outcome of receiving a data frame: `tell_writer` when the frame
// arrived but breaks the stream's rules (the writer is told why); otherwise
// an error is the connection's, and there is no one to tell.
struct Arrival {
  Status status;
  bool tell_writer = false;
};

// Receives the frame that must start at *expected, decodes it with `relay`
// and advances *expected past it.
awaitable<Arrival> ReceiveDataFrame(Connection& conn, uint64_t id, dfs::FrameRelay* relay,
                                    int64_t* expected, InboundFrame* in) {
  Status s = co_await conn.Receive(&in->frame, &in->data);
  if (!s.ok()) co_return Arrival{s};
  if (in->frame.status_code() != 0 || !in->chunk.ParseFromString(in->frame.body())) {
    co_return Arrival{Status::ProtocolError("block " + std::to_string(id) + ": bad data frame")};
  }
  // A compressed frame (from another datacenter) becomes block bytes here;
  // one that does not decompress is Corruption, told to the writer.
  if (Status d = relay->Decode(in->chunk, &in->data); !d.ok()) co_return Arrival{d, true};
  const int64_t chunks = (static_cast<int64_t>(in->data.size()) + dfs::kChecksumChunkBytes - 1) /
                         dfs::kChecksumChunkBytes;
  if (in->chunk.offset() != *expected) {
    co_return Arrival{Status::InvalidArgument("out-of-order data chunk"), true};
  }
  if (in->chunk.checksums_size() != chunks) {
    co_return Arrival{Status::InvalidArgument("data chunk without a checksum per 64 KiB"), true};
  }
  *expected += static_cast<int64_t>(in->data.size());
  co_return Arrival{};
}

// Tells a coroutine that the disk work it started is done (sent from the
// store pool).
using DiskDone = asio::experimental::concurrent_channel<void(boost::system::error_code, Status)>;

// Runs `work` (disk reads or writes and their checksums) on `pool`, so it
// never holds an io thread; its Status arrives on `done`, which the caller
// must receive before anything `work` uses goes away. A plain post, not
// co_spawn onto the pool inside a parallel group: that installs cancellation
// handlers from the pool's thread into slots the io threads use (it crashed
// in cancellation_slot::prepare_memory).
template <typename Work>
void StartDiskWork(asio::thread_pool& pool, DiskDone* done, Work work) {
  asio::post(pool, [done, work = std::move(work)]() mutable {
    done->try_send(boost::system::error_code(), work());  // capacity 1, never full
  });
}

// Receives what StartDiskWork sent.
awaitable<Status> DiskWorkDone(DiskDone& done) {
  auto [ignored, status] = co_await done.async_receive(asio::as_tuple(asio::use_awaitable));
  co_return status;
}

// What the receiving side did while a frame was being stored.
struct Step {
  Status forwarded;  // OK when forwarded, or when there is no next node
  Arrival arrival;   // of the following frame; OK and empty after the last
};

// Forwards `cur` to the next node (if any), then receives the following
// frame into `into` unless `cur` was the last.
awaitable<Step> ForwardAndReceive(Connection& conn, uint64_t id, Connection* next,
                                  dfs::FrameRelay* relay, const InboundFrame* cur,
                                  int64_t* expected, InboundFrame* into) {
  Step step;
  if (next) {
    // As received when its encoding suits the next hop, else re-encoded.
    // Done before the next frame is decoded: the relay keeps one frame.
    auto [out, out_data] = relay->Forward(cur->frame, cur->chunk, cur->data);
    step.forwarded = co_await next->Send(*out, out_data);
  }
  if (!cur->chunk.last()) step.arrival = co_await ReceiveDataFrame(conn, id, relay, expected, into);
  co_return step;
}

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
  w->disk_ = std::make_unique<DiskHealth>(self->data_dir, self->min_free_bytes);
  w->LogDroppedAtOpen();
  Worker* raw = w.get();
  w->tasks_ = std::make_unique<TaskTracker>(config, *self, *w->store_, *w->disk_,
                                            [raw] { raw->Wake(); });
  return w;
}

Status Worker::Start() {
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
  LearnMembers(registered.members(), registered.membership_version());
  tasks_->ForgetJobs(registered.finished_jobs());
  for (uint64_t id : registered.delete_blocks()) store_->Remove(id);
  spdlog::info("registered with master {} ({} blocks, {} quarantined; {} orphans deleted)",
               config_.master.address.ToString(), reg.blocks_size(),
               reg.quarantined_blocks_size(), registered.delete_blocks_size());

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
    beat.set_membership_version(membership_version_);
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
    if (reply.members_size() > 0) LearnMembers(reply.members(), reply.membership_version());
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
                          uint64_t version) {
  membership_version_ = version;
  if (!rpc_options_.tls) return;
  for (const pb::WorkerInfo& m : members) rpc_options_.tls->LearnNode(m.address(), m.datacenter());
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
  auto length = store_->Length(id);
  if (!length.ok()) {
    spdlog::warn("cannot copy block {}: {}", id, length.status().ToString());
    co_return;
  }
  std::vector<pb::ReplicaLocation> targets(command.targets().begin(), command.targets().end());
  Status local;  // a failure reading our own copy, as opposed to a target's failure
  dfs::ByteSource source = [&](int64_t offset, int64_t n, std::string* out) {
    local = store_->Read(id, offset, n, out);
    return local;
  };
  auto done = co_await dfs::WriteBlockPipeline(
      rpc_options_, id, targets, *length, config_.dfs.transfer_chunk_bytes, source, nullptr,
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
  auto length = store_->Length(id);
  if (!length.ok()) co_return length.status();
  std::string data;
  const int64_t step = config_.dfs.transfer_chunk_bytes;
  for (int64_t offset = 0; offset < *length; offset += step) {
    MR_CO_RETURN_IF_ERROR(store_->Read(id, offset, step, &data));
    co_await asio::post(io_, asio::use_awaitable);  // let other connections in
  }
  co_return Status::OK();
}

// ---------------------------------------------------------------- block server

// Sends exactly the bytes asked for, [offset, offset + length), at any
// offset. The store verifies every stored chunk a frame touches (it reads
// whole chunks); a piece of the frame that is a whole stored chunk carries
// its stored checksum (checked end to end by the reader), a piece of a
// chunk the checksum of that piece (docs/wire-format.md, "dn.ReadBlock").
awaitable<Status> Worker::ServeReadBlock(ServerCall& call) {
  pb::ReadBlockRequest req;
  if (!call.Parse(&req)) co_return Status::ProtocolError("malformed ReadBlockRequest");
  const uint64_t id = req.block_id();
  auto length = store_->Length(id);
  if (!length.ok()) co_return length.status();
  if (req.offset() < 0 || req.offset() > *length) {
    co_return Status::InvalidArgument("bad read offset " + std::to_string(req.offset()));
  }
  const int64_t end =
      req.length() < 0 ? *length : req.offset() + std::min(req.length(), *length - req.offset());
  pb::ReadBlockReply header;
  header.set_block_length(*length);
  call.replied = true;
  MR_CO_RETURN_IF_ERROR(co_await call.conn.SendReply(header));
  pb::Frame frame;
  pb::DataChunk chunk;
  if (req.offset() >= end) {  // nothing asked for: one empty last frame
    chunk.set_offset(req.offset());
    chunk.set_last(true);
    chunk.SerializeToString(frame.mutable_body());
    co_return co_await call.conn.Send(frame);
  }

  // Frames end on chunk boundaries transfer_chunk_bytes apart (the first
  // may start inside a chunk, the last end inside one). ReadChunks verifies
  // each stored chunk a frame touches and gives the frame's checksums. It
  // runs on the store pool, one frame ahead: frame k+1 is read and verified
  // while frame k is sent.
  const int64_t chunk_bytes = dfs::kChecksumChunkBytes;
  const int64_t step = config_.dfs.transfer_chunk_bytes;
  // The reader asks for compression when it is in another datacenter
  // (dfs/wire_codec.h); it is done on the store pool with the read.
  const int level = std::clamp(req.zstd_level(), 0, 19);
  bool damaged = false;  // a bad chunk was met: go on one chunk per frame
  auto frame_end = [&](int64_t offset) {
    const int64_t aligned = offset / chunk_bytes * chunk_bytes;
    return std::min(end, aligned + (damaged ? chunk_bytes : step));
  };
  struct OutboundFrame {
    int64_t offset = 0, end = 0;
    std::string data;
    std::vector<uint64_t> sums;
    pb::DataChunk chunk;  // offset, checksums and encoding; `last` is set when sent
    std::string wire;     // data compressed, when chunk.zstd_raw_bytes() > 0
  };
  OutboundFrame frames[2];
  const auto executor = co_await asio::this_coro::executor;
  DiskDone done(executor, 1);
  auto start_read = [&](OutboundFrame* f, int64_t offset) {
    f->offset = offset;
    f->end = frame_end(offset);
    StartDiskWork(store_pool_, &done, [store = store_.get(), id, f, level] {
      Status s = store->ReadChunks(id, f->offset, f->end - f->offset, &f->data, &f->sums);
      f->chunk.Clear();
      f->chunk.set_offset(f->offset);
      f->chunk.mutable_checksums()->Assign(f->sums.begin(), f->sums.end());
      if (s.ok() && level > 0) dfs::EncodeFrameData(level, f->data, &f->chunk, &f->wire);
      return s;
    });
  };
  start_read(&frames[0], req.offset());
  for (int k = 0;; k ^= 1) {
    OutboundFrame* cur = &frames[k];
    Status s = co_await DiskWorkDone(done);
    if (s.IsCorruption() && !damaged) {
      // Quarantine, then send the good chunks before the bad one, one per
      // frame, so the reader resumes on another replica at the bad chunk.
      QuarantineReplica(id, s);
      damaged = true;
      start_read(cur, cur->offset);
      s = co_await DiskWorkDone(done);
    }
    if (!s.ok()) {
      co_return co_await call.conn.SendError(s);  // ends the stream; the reader fails over
    }
    const bool more = cur->end < end;
    if (more) start_read(&frames[k ^ 1], cur->end);
    cur->chunk.set_last(!more);
    cur->chunk.SerializeToString(frame.mutable_body());
    const std::string& payload = cur->chunk.zstd_raw_bytes() > 0 ? cur->wire : cur->data;
    Status sent = co_await call.conn.Send(frame, payload);
    if (!more) co_return sent;
    if (!sent.ok()) {
      co_await DiskWorkDone(done);  // the read ahead uses frames[k ^ 1]
      co_return sent;
    }
  }
}

// Stores a block arriving in DataChunk frames and forwards every frame to
// the next node of the pipeline. A downstream failure drops the downstream
// (the block completes here); an upstream failure abandons the block.
awaitable<Status> Worker::ServeWriteBlock(ServerCall& call) {
  pb::WriteBlockRequest req;
  if (!call.Parse(&req)) co_return Status::ProtocolError("malformed WriteBlockRequest");
  const uint64_t id = req.block_id();
  auto created = store_->NewWriter(id);
  if (!created.ok()) {
    disk_->WriteFailed();
    co_return created.status();
  }
  auto writer = std::move(created).value();

  std::unique_ptr<Connection> next;
  std::string next_id;
  if (req.downstream_size() > 0) {
    next_id = req.downstream(0).node_id();
    pb::WriteBlockRequest forward;
    forward.set_block_id(id);
    forward.set_client(req.client());
    for (int i = 1; i < req.downstream_size(); ++i) *forward.add_downstream() = req.downstream(i);
    auto address = ParseHostPort(req.downstream(0).address());
    Status s = address.status();
    if (s.ok()) {
      auto conn = co_await Connect(*address, rpc_options_);
      s = conn.status();
      if (conn.ok()) next = std::move(conn).value();
    }
    if (s.ok()) {
      pb::Empty ready;
      s = co_await next->SendRequest("dn.WriteBlock", forward);
      if (s.ok()) s = co_await next->ReceiveReply(&ready);
    }
    if (!s.ok()) {
      spdlog::warn("block {}: pipeline continues without {}: {}", id, next_id, s.ToString());
      next.reset();
    }
  }
  call.replied = true;
  MR_CO_RETURN_IF_ERROR(co_await call.conn.SendReply(pb::Empty()));

  // Two frames in flight: while the store pool verifies and writes frame k,
  // this coroutine forwards it downstream and receives frame k+1 into the
  // other buffer (docs/dfs.md, "put"). Forwarding first lets the
  // next node work on frame k while we store it (it verifies the checksums
  // itself).
  InboundFrame frames[2];
  const auto executor = co_await asio::this_coro::executor;
  DiskDone done(executor, 1);
  dfs::FrameRelay relay(next ? dfs::LinkLevel(config_.cluster.inter_dc_zstd_level, self_.datacenter,
                                              req.downstream(0).datacenter())
                             : 0,
                        config_.cluster.max_frame_bytes);
  int64_t expected = 0;  // offset of the next frame (the writer's count lags)
  Arrival arrival = co_await ReceiveDataFrame(call.conn, id, &relay, &expected, &frames[0]);
  for (int k = 0;; k ^= 1) {
    if (!arrival.status.ok()) {
      if (!arrival.tell_writer) co_return arrival.status;
      co_return co_await FailStream(call.conn, arrival.status);
    }
    const InboundFrame* cur = &frames[k];
    StartDiskWork(store_pool_, &done, [w = writer.get(), cur] {
      return w->Append(cur->data, std::span<const uint64_t>(cur->chunk.checksums().data(),
                                                            cur->chunk.checksums().size()));
    });
    // Nothing returns before the store is collected: it uses cur and writer.
    Step step = co_await ForwardAndReceive(call.conn, id, next.get(), &relay, cur, &expected,
                                           &frames[k ^ 1]);
    Status stored = co_await DiskWorkDone(done);
    if (next && !step.forwarded.ok()) {
      spdlog::warn("block {}: pipeline continues without {}: {}", id, next_id,
                   step.forwarded.ToString());
      next.reset();
    }
    if (!stored.ok()) {
      disk_->WriteFailed();
      co_return co_await FailStream(call.conn, stored);
    }
    if (cur->chunk.last()) break;
    arrival = std::move(step.arrival);
  }
  Status committed = writer->Commit();
  if (!committed.ok()) {
    disk_->WriteFailed();
    co_return co_await FailStream(call.conn, committed);
  }
  NoteReceived(id, writer->bytes_written());

  pb::WriteBlockReply reply;
  reply.add_committed(self_.id);
  reply.set_bytes(writer->bytes_written());
  if (next) {
    pb::WriteBlockReply downstream;
    Status s = co_await next->ReceiveReply(&downstream);
    if (s.ok() && downstream.bytes() == reply.bytes()) {
      for (const auto& n : downstream.committed()) reply.add_committed(n);
      reply.add_hop_wire_bytes(next->bytes_sent());  // each hop's own count (compression)
      for (int64_t b : downstream.hop_wire_bytes()) reply.add_hop_wire_bytes(b);
    } else {
      spdlog::warn("block {}: {} did not commit: {}", id, next_id, s.ToString());
    }
  }
  co_return co_await call.conn.SendReply(reply);
}

}  // namespace mr::worker
