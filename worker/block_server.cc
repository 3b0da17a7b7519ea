// The worker's block server: dn.ReadBlock and dn.WriteBlock (worker.h), the
// DataNode's streams of block bytes (docs/wire-format.md). Split from
// worker.cc, which keeps the master link, copies and repairs.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "dfs/wire_codec.h"
#include "worker/worker.h"

namespace mr::worker {
namespace {

// Ends a write stream with an error: tells the writer why, then, when the
// writer has more frames to send (`drain`), reads and drops them up to its
// last one before returning the error (the server then closes). A writer
// reads its reply only after its last frame; closing on frames still
// unread would reset the connection (TCP RST), its next send would fail,
// and the writer would see "connection closed" instead of the reason (the
// "lingering close" of HTTP servers). Bounded: at most kDrainBytes, and
// each frame within the connection's timeout.
awaitable<Status> FailStream(Connection& conn, const Status& why, bool drain) {
  constexpr int64_t kDrainBytes = 1LL << 30;
  if (!(co_await conn.SendError(why)).ok() || !drain) co_return why;
  pb::Frame frame;
  pb::DataChunk chunk;
  std::string data;
  for (int64_t drained = 0; drained < kDrainBytes; drained += static_cast<int64_t>(data.size())) {
    if (!(co_await conn.Receive(&frame, &data)).ok()) break;  // the writer hung up
    if (frame.status_code() != 0 || !chunk.ParseFromString(frame.body()) || chunk.last()) break;
  }
  co_return why;
}

// ServeWriteBlock: connects to the next node of the pipeline, if any, and
// asks it to take the block (it forwards to the rest). Null when there is
// none, or when it failed (logged): the pipeline continues without it.
awaitable<std::unique_ptr<Connection>> ConnectDownstream(const RpcOptions& options,
                                                         const pb::WriteBlockRequest& req) {
  if (req.downstream_size() == 0) co_return nullptr;
  pb::WriteBlockRequest forward;
  forward.set_block_id(req.block_id());
  forward.set_client(req.client());
  for (int i = 1; i < req.downstream_size(); ++i) *forward.add_downstream() = req.downstream(i);
  std::unique_ptr<Connection> next;
  auto address = ParseHostPort(req.downstream(0).address());
  Status s = address.status();
  if (s.ok()) {
    // One stall bound per node from the next on (WriteBlockPipeline).
    auto conn = co_await Connect(*address, options, options.transfer_stall_ms * req.downstream_size());
    s = conn.status();
    if (conn.ok()) next = std::move(conn).value();
  }
  if (s.ok()) {
    pb::Empty ready;  // once the next node has connected to the one after
    s = co_await next->SendRequest("dn.WriteBlock", forward);
    if (s.ok()) s = co_await next->ReceiveReply(&ready, nullptr, Connection::Expect::kSlowStart);
  }
  if (s.ok()) co_return next;
  spdlog::warn("block {}: pipeline continues without {}: {}", req.block_id(),
               req.downstream(0).node_id(), s.ToString());
  co_return nullptr;
}

}  // namespace

// Sends exactly the bytes asked for, [offset, offset + length), at any
// offset. The store verifies every stored chunk a frame touches (it reads
// whole chunks); a piece of the frame that is a whole stored chunk carries
// its stored checksum (checked end to end by the reader), a piece of a
// chunk the checksum of that piece (docs/wire-format.md, "dn.ReadBlock").
awaitable<Status> Worker::ServeReadBlock(ServerCall& call) {
  pb::ReadBlockRequest req;
  if (!call.Parse(&req)) co_return Status::ProtocolError("malformed ReadBlockRequest");
  const uint64_t id = req.block_id();
  auto opened = store_->OpenReader(id);
  if (!opened.ok()) {
    if (opened.status().IsCorruption()) QuarantineReplica(id, opened.status());  // file missing
    co_return opened.status();
  }
  const std::unique_ptr<dfs::BlockReader> reader = std::move(opened).value();
  const int64_t length = reader->length();
  if (req.offset() < 0 || req.offset() > length) {
    co_return Status::InvalidArgument("bad read offset " + std::to_string(req.offset()));
  }
  const int64_t end =
      req.length() < 0 ? length : req.offset() + std::min(req.length(), length - req.offset());
  pb::ReadBlockReply header;
  header.set_block_length(length);
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
  // each stored chunk a frame touches and gives the frame's checksums.
  const int64_t chunk_bytes = dfs::kChecksumChunkBytes;
  const int64_t step = config_.dfs.transfer_chunk_bytes;
  std::string data, scratch;  // scratch: the compressed frame, when the reader asked for one
  std::vector<uint64_t> sums;
  int64_t offset = req.offset();
  bool damaged = false;  // a bad chunk was met: go on one chunk per frame
  do {
    const int64_t aligned = offset / chunk_bytes * chunk_bytes;
    int64_t frame_end = std::min(end, aligned + (damaged ? chunk_bytes : step));
    Status s = reader->ReadChunks(offset, frame_end - offset, &data, &sums);
    if (s.IsCorruption() && !damaged) {
      // Quarantine, then send the good chunks before the bad one, one per
      // frame, so the reader resumes on another replica at the bad chunk.
      QuarantineReplica(id, s);
      damaged = true;
      frame_end = std::min(end, aligned + chunk_bytes);
      s = reader->ReadChunks(offset, frame_end - offset, &data, &sums);
    }
    if (!s.ok()) {
      co_return co_await call.conn.SendError(s);  // ends the stream; the reader fails over
    }
    chunk.set_offset(offset);
    chunk.set_last(frame_end >= end);
    chunk.mutable_checksums()->Assign(sums.begin(), sums.end());
    const std::string_view wire =
        dfs::EncodeFrameData(std::clamp(req.zstd_level(), 0, 19), data, &chunk, &scratch);
    chunk.SerializeToString(frame.mutable_body());
    if (chunk.zstd_raw_bytes() == 0 && !call.conn.encrypted()) {
      // The bytes just verified, sent again from the page cache without a
      // copy through this process (HDFS's transferTo). The file is the one
      // verified (block files never change in place); should something
      // write to it meanwhile, the reader's end-to-end check catches it.
      MR_CO_RETURN_IF_ERROR(
          co_await call.conn.SendFileRange(frame, reader->fd(), offset, data.size(), data));
    } else {
      MR_CO_RETURN_IF_ERROR(co_await call.conn.Send(frame, wire));
    }
    offset = frame_end;
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
  auto created = store_->NewWriter(id);
  if (!created.ok()) {
    disk_->WriteFailed(created.status().ToString());
    co_return created.status();
  }
  auto writer = std::move(created).value();

  const std::string next_id = req.downstream_size() > 0 ? req.downstream(0).node_id() : "";
  std::unique_ptr<Connection> next = co_await ConnectDownstream(rpc_options_, req);
  call.replied = true;
  MR_CO_RETURN_IF_ERROR(co_await call.conn.SendReply(pb::Empty()));

  pb::Frame frame;
  pb::DataChunk chunk;
  std::string data;
  dfs::FrameRelay relay(next ? dfs::LinkLevel(config_.cluster.inter_dc_zstd_level, self_.datacenter,
                                              req.downstream(0).datacenter())
                             : 0,
                        config_.cluster.max_frame_bytes);
  while (true) {
    MR_CO_RETURN_IF_ERROR(co_await call.conn.Receive(&frame, &data));
    if (frame.status_code() != 0 || !chunk.ParseFromString(frame.body())) {
      co_return Status::ProtocolError("block " + std::to_string(id) + ": bad data frame");
    }
    if (Status d = relay.Decode(chunk, &data); !d.ok()) {
      co_return co_await FailStream(call.conn, d, !chunk.last());
    }
    const int64_t chunks = (static_cast<int64_t>(data.size()) + dfs::kChecksumChunkBytes - 1) /
                           dfs::kChecksumChunkBytes;
    Status s;
    if (chunk.offset() != writer->bytes_written()) {
      s = Status::InvalidArgument("out-of-order data chunk");
    } else if (chunk.checksums_size() != chunks) {
      s = Status::InvalidArgument("data chunk without a checksum per 64 KiB");
    }
    if (!s.ok()) co_return co_await FailStream(call.conn, s, !chunk.last());
    // Forward first, so the next node works on this frame while we store it
    // (it verifies the checksums itself).
    if (next) {
      auto [out, out_data] = relay.Forward(frame, chunk, data);
      Status f = co_await next->Send(*out, out_data);
      if (!f.ok()) {
        spdlog::warn("block {}: pipeline continues without {}: {}", id, next_id, f.ToString());
        next.reset();
      }
    }
    s = writer->Append(data, std::span<const uint64_t>(chunk.checksums().data(),
                                                       chunk.checksums().size()));
    if (!s.ok()) {
      disk_->WriteFailed(s.ToString());
      co_return co_await FailStream(call.conn, s, !chunk.last());
    }
    if (chunk.last()) break;
  }
  Status committed = writer->Commit();
  if (!committed.ok()) {
    disk_->WriteFailed(committed.ToString());
    co_return co_await FailStream(call.conn, committed, /*drain=*/false);
  }
  NoteReceived(id, writer->bytes_written());

  pb::WriteBlockReply reply;
  reply.add_committed(self_.id);
  reply.set_bytes(writer->bytes_written());
  if (next) {
    pb::WriteBlockReply downstream;  // once every node after this one has committed
    Status s = co_await next->ReceiveReply(&downstream, nullptr, Connection::Expect::kSlowStart);
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
