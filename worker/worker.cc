#include "worker/worker.h"

#include <chrono>

#include <spdlog/spdlog.h>

#include "dfs/client.h"

namespace mr::worker {
namespace {

// Ends a write stream with an error: tells the writer why, then returns the
// error so the server closes the connection (the writer may still be
// sending frames that must not be read as requests).
awaitable<Status> FailStream(Connection& conn, const Status& why) {
  co_await conn.SendError(why);
  co_return why;
}

}  // namespace

Worker::Worker(const ClusterConfig& config, const WorkerOptions& self, asio::io_context& io)
    : config_(config), self_(self), io_(io),
      rpc_options_(RpcOptions::FromConfig(config, "worker " + self.id)),
      strand_(asio::make_strand(io)) {}

Worker::~Worker() = default;

Result<std::unique_ptr<Worker>> Worker::Create(const ClusterConfig& config, const std::string& id,
                                               asio::io_context& io) {
  const WorkerOptions* self = config.FindWorker(id);
  if (!self) return Status::NotFound("worker '" + id + "' is not in the cluster file");
  std::unique_ptr<Worker> w(new Worker(config, *self, io));
  dfs::BlockStore::Options options;
  options.fsync = config.dfs.fsync;
  options.capacity_bytes = self->capacity_bytes;
  MR_ASSIGN_OR_RETURN(w->store_, dfs::BlockStore::Open(self->data_dir + "/blocks", options));
  Worker* raw = w.get();
  w->tasks_ = std::make_unique<TaskTracker>(config, *self, *w->store_, [raw] { raw->Wake(); });
  return w;
}

Status Worker::Start() {
  server_ = std::make_unique<RpcServer>(io_.get_executor(), rpc_options_, "worker " + self_.id);
  server_->Handle("dn.ReadBlock", [this](ServerCall& c) { return ServeReadBlock(c); });
  server_->Handle("dn.WriteBlock", [this](ServerCall& c) { return ServeWriteBlock(c); });
  tasks_->RegisterHandlers(*server_);
  MR_RETURN_IF_ERROR(server_->Listen(self_.address));
  server_->Start();
  asio::co_spawn(strand_, MasterLoop(), asio::detached);
  spdlog::info("worker {} in {} listening on {}:{} with {} blocks ({} bytes)", self_.id,
               self_.datacenter, self_.address.host, server_->port(), store_->List().size(),
               store_->used_bytes());
  return Status::OK();
}

void Worker::Stop() {
  stopped_ = true;
  if (server_) server_->Stop();
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

// ---------------------------------------------------------------- master link

// Connects, registers, heartbeats; on any failure waits one interval and
// starts over (a restarted master is found again this way).
awaitable<void> Worker::MasterLoop() {
  asio::steady_timer timer(strand_);
  bool warned = false;
  while (!stopped_) {
    auto conn = co_await Connect(config_.master.address, rpc_options_);
    Status s = conn.status();
    if (conn.ok()) {
      master_conn_ = std::move(conn).value();
      warned = false;
      s = co_await RegisterAndBeat(*master_conn_);
      master_conn_->Close();
    }
    if (stopped_) break;
    if (!warned || !s.IsUnavailable()) {
      spdlog::warn("master link: {}; retrying every {} ms", s.ToString(),
                   config_.cluster.heartbeat_interval_ms);
      warned = true;
    }
    timer.expires_after(std::chrono::milliseconds(config_.cluster.heartbeat_interval_ms));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

awaitable<Status> Worker::RegisterAndBeat(Connection& master) {
  pb::RegisterRequest reg;
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
  }
  for (const auto& b : store_->List()) {
    pb::BlockRef* ref = reg.add_blocks();
    ref->set_id(b.id);
    ref->set_bytes(b.bytes);
  }
  reg.set_used_bytes(store_->used_bytes());
  pb::RegisterReply registered;
  // Running attempts stop (the master runs them again); finished maps'
  // outputs are offered to the master, which may take them back.
  for (pb::TaskReport& held : tasks_->Reconnect()) *reg.add_held_map_outputs() = std::move(held);
  MR_CO_RETURN_IF_ERROR(co_await master.Call("cluster.Register", reg, &registered));
  tasks_->ForgetJobs(registered.finished_jobs());
  for (uint64_t id : registered.delete_blocks()) store_->Remove(id);
  spdlog::info("registered with master {} ({} blocks; {} orphans deleted)",
               config_.master.address.ToString(), reg.blocks_size(),
               registered.delete_blocks_size());

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
    tasks_->Fill(&beat);
    {
      std::lock_guard lock(mu_);
      for (auto& b : received_) *beat.add_received() = std::move(b);
      for (uint64_t id : removed_) beat.add_removed(id);
      received_.clear();
      removed_.clear();
    }
    beat.set_used_bytes(store_->used_bytes());
    pb::HeartbeatReply reply;
    Status s = co_await master.Call("cluster.Heartbeat", beat, &reply);
    if (!s.ok()) {
      // Put the reports back so the master learns them after reconnecting.
      std::lock_guard lock(mu_);
      for (const auto& b : beat.received()) received_.push_back(b);
      removed_.insert(removed_.end(), beat.removed().begin(), beat.removed().end());
      tasks_->Unsent(beat);
      co_return s;
    }
    if (reply.reregister()) co_return Status::Unavailable("master asked to register again");
    tasks_->Apply(reply);
    for (uint64_t id : reply.delete_blocks()) {
      MR_CO_RETURN_IF_ERROR(store_->Remove(id));
      spdlog::debug("deleted block {} as the master asked", id);
    }
    for (const auto& t : reply.transfers()) asio::co_spawn(io_, CopyBlock(t), asio::detached);
  }
  co_return Status::OK();
}

void Worker::NoteReceived(uint64_t id, int64_t bytes) {
  std::lock_guard lock(mu_);
  pb::BlockRef ref;
  ref.set_id(id);
  ref.set_bytes(bytes);
  received_.push_back(std::move(ref));
}

void Worker::DropCorrupt(uint64_t id, const Status& why) {
  spdlog::error("block {}: {}; dropping this replica", id, why.ToString());
  store_->Remove(id);
  std::lock_guard lock(mu_);
  removed_.push_back(id);
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
  auto done = co_await dfs::WriteBlockPipeline(rpc_options_, id, targets, *length,
                                               config_.dfs.transfer_chunk_bytes, source);
  if (!done.ok()) {
    if (local.IsCorruption()) DropCorrupt(id, local);
    spdlog::warn("copy of block {} to {} failed: {}", id, targets.front().node_id(),
                 done.status().ToString());
  } else {
    spdlog::info("copied block {} to {} node(s)", id, done->size());
  }
}

// ---------------------------------------------------------------- block server

awaitable<Status> Worker::ServeReadBlock(ServerCall& call) {
  pb::ReadBlockRequest req;
  if (!call.Parse(&req)) co_return Status::ProtocolError("malformed ReadBlockRequest");
  const uint64_t id = req.block_id();
  auto length = store_->Length(id);
  if (!length.ok()) co_return length.status();
  if (req.offset() < 0 || req.offset() % dfs::kChecksumChunkBytes != 0 || req.offset() > *length) {
    co_return Status::InvalidArgument("bad read offset " + std::to_string(req.offset()));
  }
  // Frames carry whole 64 KiB chunks so the reader can verify every byte:
  // the end is rounded up to a chunk boundary (or the block's end) and the
  // reader trims what it did not ask for.
  const int64_t asked =
      req.length() < 0 ? *length : req.offset() + std::min(req.length(), *length - req.offset());
  const int64_t chunk_bytes = dfs::kChecksumChunkBytes;
  const int64_t end = std::min(*length, (asked + chunk_bytes - 1) / chunk_bytes * chunk_bytes);
  pb::ReadBlockReply header;
  header.set_block_length(*length);
  call.replied = true;
  MR_CO_RETURN_IF_ERROR(co_await call.conn.SendReply(header));

  const int64_t step = config_.dfs.transfer_chunk_bytes;
  std::string data;
  std::vector<uint64_t> sums;
  pb::Frame frame;
  pb::DataChunk chunk;
  int64_t offset = req.offset();
  do {
    const int64_t n = std::min(step, end - offset);
    Status s = store_->ReadChunks(id, offset, n, &data, &sums);
    if (!s.ok()) {
      if (s.IsCorruption()) DropCorrupt(id, s);
      co_return co_await call.conn.SendError(s);  // ends the stream; the reader fails over
    }
    chunk.set_offset(offset);
    chunk.set_last(offset + n >= end);
    chunk.mutable_checksums()->Assign(sums.begin(), sums.end());
    chunk.SerializeToString(frame.mutable_body());
    MR_CO_RETURN_IF_ERROR(co_await call.conn.Send(frame, data));
    offset += n;
  } while (offset < end);
  co_return Status::OK();
}

// Stores a block arriving in DataChunk frames and forwards every frame to
// the next node of the pipeline. A downstream failure drops the downstream
// (the block completes here); an upstream failure abandons the block.
awaitable<Status> Worker::ServeWriteBlock(ServerCall& call) {
  pb::WriteBlockRequest req;
  if (!call.Parse(&req)) co_return Status::ProtocolError("malformed WriteBlockRequest");
  const uint64_t id = req.block_id();
  MR_CO_ASSIGN_OR_RETURN(auto writer, store_->NewWriter(id));

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

  pb::Frame frame;
  pb::DataChunk chunk;
  std::string data;
  while (true) {
    MR_CO_RETURN_IF_ERROR(co_await call.conn.Receive(&frame, &data));
    if (frame.status_code() != 0 || !chunk.ParseFromString(frame.body())) {
      co_return Status::ProtocolError("block " + std::to_string(id) + ": bad data frame");
    }
    const int64_t chunks = (static_cast<int64_t>(data.size()) + dfs::kChecksumChunkBytes - 1) /
                           dfs::kChecksumChunkBytes;
    Status s;
    if (chunk.offset() != writer->bytes_written()) {
      s = Status::InvalidArgument("out-of-order data chunk");
    } else if (chunk.checksums_size() != chunks) {
      s = Status::InvalidArgument("data chunk without a checksum per 64 KiB");
    }
    if (!s.ok()) co_return co_await FailStream(call.conn, s);
    // Forward first, so the next node works on this frame while we store it
    // (it verifies the checksums itself).
    if (next) {
      Status f = co_await next->Send(frame, data);
      if (!f.ok()) {
        spdlog::warn("block {}: pipeline continues without {}: {}", id, next_id, f.ToString());
        next.reset();
      }
    }
    s = writer->Append(data, std::span<const uint64_t>(chunk.checksums().data(),
                                                       chunk.checksums().size()));
    if (!s.ok()) co_return co_await FailStream(call.conn, s);
    if (chunk.last()) break;
  }
  Status committed = writer->Commit();
  if (!committed.ok()) co_return co_await FailStream(call.conn, committed);
  NoteReceived(id, writer->bytes_written());

  pb::WriteBlockReply reply;
  reply.add_committed(self_.id);
  reply.set_bytes(writer->bytes_written());
  if (next) {
    pb::WriteBlockReply downstream;
    Status s = co_await next->ReceiveReply(&downstream);
    if (s.ok() && downstream.bytes() == reply.bytes()) {
      for (const auto& n : downstream.committed()) reply.add_committed(n);
    } else {
      spdlog::warn("block {}: {} did not commit: {}", id, next_id, s.ToString());
    }
  }
  co_return co_await call.conn.SendReply(reply);
}

}  // namespace mr::worker
