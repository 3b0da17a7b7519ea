#include "dfs/client.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>

#include <spdlog/spdlog.h>

#include "dfs/block_store.h"
#include "dfs/input_type.h"
#include "dfs/wire_codec.h"

namespace mr::dfs {
namespace {

constexpr int kBlockAttempts = 3;

// Closes a file descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

Status PreadFully(int fd, int64_t offset, int64_t n, std::string* out, const std::string& path) {
  out->resize(static_cast<size_t>(n));
  int64_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, out->data() + done, static_cast<size_t>(n - done), offset + done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Status::IOError("read '" + path + "': " + std::strerror(errno));
    if (r == 0) return Status::IOError("'" + path + "' shrank while being read");
    done += r;
  }
  return Status::OK();
}

// A random id per client: the master ties each lease to it.
std::string NewClientId() {
  std::random_device rd;
  const uint64_t v = (uint64_t{rd()} << 32) ^ rd();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(v));
  return hex;
}

}  // namespace

DfsClient::DfsClient(HostPort master, RpcOptions options, int64_t transfer_chunk_bytes)
    : master_(std::move(master)),
      options_(std::move(options)),
      chunk_bytes_(transfer_chunk_bytes),
      client_id_(NewClientId()) {}

DfsClient::~DfsClient() = default;

// One connection to the master, made on first use and remade when it may
// have gone stale (closed, or idle long enough for the server to close it).
// Requests are not retried: not every one is idempotent.
awaitable<Status> DfsClient::CallMaster(std::string_view method,
                                        const google::protobuf::MessageLite& req,
                                        google::protobuf::MessageLite* reply) {
  if (!master_conn_ || !master_conn_->IsFresh()) {
    auto conn = co_await Connect(master_, options_);
    if (!conn.ok()) co_return conn.status().WithContext("master " + master_.ToString());
    master_conn_ = std::move(conn).value();
  }
  co_return co_await master_conn_->Call(method, req, reply);
}

std::string DfsClient::MasterLocalHost() const {
  if (!master_conn_) return "";
  boost::system::error_code ec;
  auto local = const_cast<Connection&>(*master_conn_).socket().local_endpoint(ec);
  return ec ? "" : local.address().to_string();
}

awaitable<Status> DfsClient::Mkdir(const std::string& path, bool parents) {
  pb::PathRequest req;
  req.set_path(path);
  req.set_recursive(parents);
  pb::Empty reply;
  co_return co_await CallMaster("dfs.Mkdir", req, &reply);
}

awaitable<Result<pb::ListReply>> DfsClient::List(const std::string& path) {
  pb::PathRequest req;
  req.set_path(path);
  pb::ListReply reply;
  MR_CO_RETURN_IF_ERROR(co_await CallMaster("dfs.List", req, &reply));
  co_return reply;
}

awaitable<Result<pb::StatReply>> DfsClient::Stat(const std::string& path,
                                                 const std::string& reader_node) {
  pb::LocateRequest req;
  req.set_path(path);
  req.set_reader_node(reader_node.empty() ? location_.node : reader_node);
  if (reader_node.empty()) {
    req.set_reader_datacenter(location_.datacenter);
    req.set_reader_rack(location_.rack);
  }
  pb::StatReply reply;
  MR_CO_RETURN_IF_ERROR(co_await CallMaster("dfs.Stat", req, &reply));
  co_return reply;
}

awaitable<Status> DfsClient::Delete(const std::string& path, bool recursive) {
  pb::PathRequest req;
  req.set_path(path);
  req.set_recursive(recursive);
  pb::Empty reply;
  co_return co_await CallMaster("dfs.Delete", req, &reply);
}

awaitable<Status> DfsClient::Rename(const std::string& from, const std::string& to) {
  pb::RenameRequest req;
  req.set_from(from);
  req.set_to(to);
  pb::Empty reply;
  co_return co_await CallMaster("dfs.Rename", req, &reply);
}

awaitable<Result<pb::ClusterStatusReply>> DfsClient::ClusterStatus() {
  pb::ClusterStatusReply reply;
  MR_CO_RETURN_IF_ERROR(co_await CallMaster("cluster.Status", pb::Empty(), &reply));
  co_return reply;
}

// ---------------------------------------------------------------- link rates

void DfsClient::RecordReadRate(const pb::ReplicaLocation& replica, int64_t bytes,
                               std::chrono::steady_clock::time_point started) {
  const std::string& here = location_.datacenter;
  if (here.empty() || replica.datacenter() == here) return;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const bool first = !link_rates_->Estimates().contains(replica.datacenter());
  link_rates_->RecordRead(here, replica, bytes, seconds);
  if (bytes < kMinRateSampleBytes || !(seconds > 0)) return;
  const double estimate = link_rates_->Estimates().at(replica.datacenter());
  // Workers log the first estimate of each link at info; every sample at debug.
  spdlog::log(first ? spdlog::level::info : spdlog::level::debug,
              "read rate {} -> {}: {} B from {} in {:.3f} s ({:.2f} MB/s); estimate {:.2f} MB/s",
              replica.datacenter(), here, bytes, replica.node_id(), seconds, bytes / seconds / 1e6,
              estimate / 1e6);
}

// ---------------------------------------------------------------- writing

awaitable<Status> DfsClient::Put(const std::string& local, const std::string& dfs_path,
                                 const PutOptions& options) {
  Fd file{::open(local.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) {
    const std::string why = std::strerror(errno);
    co_return errno == ENOENT ? Status::NotFound("local file '" + local + "' does not exist")
                              : Status::IOError("cannot open '" + local + "': " + why);
  }
  struct stat st {};
  if (::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    co_return Status::InvalidArgument("'" + local + "' is not a regular file");
  }
  std::string first;
  MR_CO_RETURN_IF_ERROR(PreadFully(file.fd, 0, std::min<int64_t>(st.st_size, kClassifySampleBytes),
                                   &first, local));
  ByteSource source = [&](int64_t offset, int64_t n, std::string* out) {
    return PreadFully(file.fd, offset, n, out, local);
  };
  co_return co_await Write(dfs_path, st.st_size, first, source, options);
}

awaitable<Status> DfsClient::Write(const std::string& dfs_path, int64_t length,
                                   std::string_view first_bytes, const ByteSource& source,
                                   const PutOptions& options) {
  pb::CreateFileRequest create;
  create.set_path(dfs_path);
  create.set_replication(options.replication);
  create.set_block_size(options.block_size);
  create.set_writer_node(options.writer_node.empty() ? location_.node : options.writer_node);
  create.set_writer_datacenter(location_.datacenter);
  create.set_datacenter(options.datacenter);
  create.set_overwrite(options.overwrite);
  create.set_first_bytes(std::string(first_bytes.substr(0, kClassifySampleBytes)));
  create.set_client_id(client_id_);
  pb::CreateFileReply lease;
  MR_CO_RETURN_IF_ERROR(co_await CallMaster("dfs.Create", create, &lease));

  Status s;
  bool lease_refused = false;
  for (int64_t offset = 0; offset < length && s.ok(); offset += lease.block_size()) {
    s = co_await WriteOneBlock(lease.lease_id(), dfs_path, offset,
                               std::min<int64_t>(lease.block_size(), length - offset), source,
                               &lease_refused);
  }
  pb::Empty ignored;
  if (!s.ok()) {
    // The master's own words when it refused the lease (gone after a
    // restart or expiry, or not ours): they name the put already.
    if (lease_refused) co_return s;
    pb::AbandonFileRequest abandon;
    abandon.set_lease_id(lease.lease_id());
    abandon.set_path(dfs_path);
    abandon.set_client_id(client_id_);
    Status abandoned = co_await CallMaster("dfs.AbandonFile", abandon, &ignored);
    // A lease found gone is why the put failed (say, its connection died
    // with the old master and the abandon reached the new one).
    if (abandoned.IsNotFound()) co_return abandoned;
    co_return s.WithContext("put " + dfs_path);
  }
  pb::CompleteFileRequest complete;
  complete.set_lease_id(lease.lease_id());
  complete.set_path(dfs_path);
  complete.set_client_id(client_id_);
  co_return co_await CallMaster("dfs.CompleteFile", complete, &ignored);
}

// Writes one block, retrying on a new pipeline without the first node when
// that node fails. Sets *lease_refused when the master refused the lease
// itself (NotFound: gone; PermissionDenied: not this put's).
awaitable<Status> DfsClient::WriteOneBlock(uint64_t lease, const std::string& dfs_path,
                                           int64_t offset, int64_t length, const ByteSource& source,
                                           bool* lease_refused) {
  auto refused = [&](Status s) {
    *lease_refused = s.IsNotFound() || s.IsPermissionDenied();
    return s;
  };
  std::optional<uint32_t> byte_before;
  if (offset > 0) {
    auto b = ByteBefore(source, offset);
    if (!b.ok()) co_return b.status();
    byte_before = *b;
  }
  pb::AddBlockRequest add;
  add.set_lease_id(lease);
  add.set_path(dfs_path);
  add.set_client_id(client_id_);
  Status last;
  for (int attempt = 0; attempt < kBlockAttempts; ++attempt) {
    pb::AddBlockReply block;
    Status added = co_await CallMaster("dfs.AddBlock", add, &block);
    if (!added.ok()) co_return refused(added);
    std::vector<pb::ReplicaLocation> pipeline(block.pipeline().begin(), block.pipeline().end());
    ByteSource shifted = [&](int64_t off, int64_t n, std::string* out) {
      return source(offset + off, n, out);
    };
    std::vector<int64_t> wire;
    auto committed = co_await WriteBlockPipeline(
        options_, block.block_id(), pipeline, length, chunk_bytes_, shifted, &wire,
        LinkLevel(inter_dc_zstd_level_, location_.datacenter, pipeline[0].datacenter()));
    if (committed.ok() && observer_) {
      // Hop 0 is counted at our socket, each later one at its sender's (a
      // node too old to say forwarded the same frames as the hop before).
      observer_({nullptr, &pipeline[0], wire.at(0)});
      for (size_t i = 1; i < pipeline.size() && i < committed->size(); ++i) {
        observer_({&pipeline[i - 1], &pipeline[i], i < wire.size() ? wire[i] : wire[0]});
      }
    }
    if (committed.ok()) {
      pb::CompleteBlockRequest done;
      done.set_lease_id(lease);
      done.set_path(dfs_path);
      done.set_client_id(client_id_);
      done.set_block_id(block.block_id());
      done.set_bytes(length);
      if (byte_before.has_value()) done.set_byte_before(*byte_before);
      for (const auto& n : *committed) done.add_replicas(n);
      pb::Empty ignored;
      Status completed = co_await CallMaster("dfs.CompleteBlock", done, &ignored);
      co_return refused(completed);
    }
    last = committed.status();
    spdlog::warn("block {} at offset {}: pipeline via {} failed: {}", block.block_id(), offset,
                 pipeline.front().node_id(), last.ToString());
    add.add_exclude_nodes(pipeline.front().node_id());
  }
  co_return last;
}

// One pread of one byte: the last byte of the block before, which the
// master records with the block so a map whose split starts here need not
// read the previous block (docs/storage-format.md, BlockRef).
Result<uint32_t> DfsClient::ByteBefore(const ByteSource& source, int64_t offset) {
  std::string b;
  MR_RETURN_IF_ERROR(source(offset - 1, 1, &b));
  if (b.size() != 1) {
    return Status::IOError("short read of the byte before offset " + std::to_string(offset));
  }
  return static_cast<uint32_t>(static_cast<unsigned char>(b[0]));
}

awaitable<Result<std::vector<std::string>>> WriteBlockPipeline(
    const RpcOptions& options, uint64_t block_id, const std::vector<pb::ReplicaLocation>& pipeline,
    int64_t length, int64_t chunk_bytes, const ByteSource& source, std::vector<int64_t>* wire_bytes,
    int zstd_level) {
  if (pipeline.empty()) co_return Status::Unavailable("empty pipeline");
  auto address = ParseHostPort(pipeline.front().address());
  if (!address.ok()) co_return address.status();
  // One stall bound per node of the pipeline: each node forwards to the
  // next under one per node after it (block_server.cc), so a node hung
  // further down is dropped by the node before it before this writer gives
  // up on the whole pipeline (HDFS extends its timeouts per hop alike).
  auto conn_or = co_await Connect(*address, options,
                                  options.transfer_stall_ms * static_cast<int>(pipeline.size()));
  if (!conn_or.ok()) co_return conn_or.status();
  Connection& conn = **conn_or;

  pb::WriteBlockRequest req;
  req.set_block_id(block_id);
  req.set_client(options.peer_name);
  for (size_t i = 1; i < pipeline.size(); ++i) *req.add_downstream() = pipeline[i];
  pb::Empty ready;
  MR_CO_RETURN_IF_ERROR(co_await conn.SendRequest("dn.WriteBlock", req));
  // "Ready" comes once the first node has connected to the next.
  MR_CO_RETURN_IF_ERROR(co_await conn.ReceiveReply(&ready, nullptr, Connection::Expect::kSlowStart));

  std::string buffer, scratch;
  pb::Frame frame;
  pb::DataChunk chunk;
  for (int64_t offset = 0; offset < length; offset += chunk_bytes) {
    const int64_t n = std::min(chunk_bytes, length - offset);
    MR_CO_RETURN_IF_ERROR(source(offset, n, &buffer));
    chunk.set_offset(offset);
    chunk.set_last(offset + n >= length);
    chunk.clear_checksums();
    for (uint64_t c : ChunkChecksums(buffer)) chunk.add_checksums(c);
    const std::string_view wire = EncodeFrameData(zstd_level, buffer, &chunk, &scratch);
    chunk.SerializeToString(frame.mutable_body());
    MR_CO_RETURN_IF_ERROR(co_await conn.Send(frame, wire));
    // A node replies before the last frame only to refuse the stream: stop
    // sending and read why (it drops what is in flight, then closes).
    if (conn.HasPendingInput()) break;
  }
  pb::WriteBlockReply reply;  // once every node has committed
  MR_CO_RETURN_IF_ERROR(co_await conn.ReceiveReply(&reply, nullptr, Connection::Expect::kSlowStart));
  if (wire_bytes != nullptr) {
    wire_bytes->assign(1, conn.bytes_sent());
    wire_bytes->insert(wire_bytes->end(), reply.hop_wire_bytes().begin(), reply.hop_wire_bytes().end());
  }
  if (reply.bytes() != length) {
    co_return Status::Corruption("pipeline stored " + std::to_string(reply.bytes()) + " of " +
                                 std::to_string(length) + " bytes");
  }
  co_return std::vector<std::string>(reply.committed().begin(), reply.committed().end());
}

// ---------------------------------------------------------------- reading

std::string BlockName(const std::string& path, int index, uint64_t id) {
  return "'" + path + "' block " + std::to_string(index) + " (id " + std::to_string(id) + ")";
}

awaitable<Status> DfsClient::Read(const std::string& dfs_path, const ByteSink& sink) {
  auto stat = co_await Stat(dfs_path);
  if (!stat.ok()) co_return stat.status();
  if (stat->inode().kind() != pb::INode::FILE) {
    co_return Status::FailedPrecondition("'" + dfs_path + "' is a directory");
  }
  for (int i = 0; i < stat->blocks_size(); ++i) {
    const pb::LocatedBlock& block = stat->blocks(i);
    Status s = co_await ReadBlock(block, 0, -1, sink);
    if (!s.ok()) co_return s.WithContext(BlockName(dfs_path, i, block.id()));
  }
  co_return Status::OK();
}

awaitable<Result<Connection*>> DfsClient::WorkerConnection(const std::string& address) {
  auto& slot = worker_conns_[address];
  if (!slot || !slot->IsFresh()) {
    auto hp = ParseHostPort(address);
    if (!hp.ok()) co_return hp.status();
    auto conn = co_await Connect(*hp, options_, options_.transfer_stall_ms);
    if (!conn.ok()) co_return conn.status();
    slot = std::move(conn).value();
  }
  co_return slot.get();
}

// Assembles [offset, end) chunk by chunk from the replicas: good ones first
// (nearest first), then the corrupt ones the master still lists. When a
// replica fails verification at some chunk, that chunk is read again from
// the next replica, which continues from there; a replica that failed only
// at an earlier chunk is tried again for later ones. An unreachable replica
// is not tried again in this read. Each step either advances the offset or
// rules a replica out at this offset, so the loop ends.
awaitable<Status> DfsClient::ReadBlock(const pb::LocatedBlock& block, int64_t offset,
                                       int64_t length, const ByteSink& sink) {
  const int64_t end = length < 0 ? block.bytes() : std::min(block.bytes(), offset + length);
  std::vector<const pb::ReplicaLocation*> order;
  for (const auto& r : block.replicas()) order.push_back(&r);
  OrderByLinkRate(location_.datacenter, link_rates_->Estimates(), &order);
  for (const auto& r : block.corrupt_replicas()) order.push_back(&r);
  if (order.empty()) {
    co_return Status::Unavailable("no live replica");
  }
  std::vector<bool> dead(order.size()), failed_here(order.size()), reported(order.size());
  bool corrupt_here = false;  // some replica failed verification at `offset`
  Status last;
  while (offset < end) {
    size_t i = 0;
    while (i < order.size() && (dead[i] || failed_here[i])) ++i;
    if (i == order.size()) break;
    const pb::ReplicaLocation& replica = *order[i];
    const int64_t before = offset;
    const auto started = std::chrono::steady_clock::now();
    last = co_await ReadFromReplica(block, replica, &offset, end, sink);
    RecordReadRate(replica, offset - before, started);
    if (last.ok()) co_return last;
    if (last.IsAborted()) co_return last;  // the sink refused the bytes: not the replica's fault
    if (offset > before) {
      std::fill(failed_here.begin(), failed_here.end(), false);
      corrupt_here = false;
    }
    if (last.IsCorruption()) {
      failed_here[i] = true;
      corrupt_here = true;
      spdlog::warn("block {} on {}: {}; reading offset {} from another replica", block.id(),
                   replica.node_id(), last.ToString(), offset);
      if (!reported[i]) {
        reported[i] = true;
        ++corrupt_replicas_seen_;
        pb::BadReplicaRequest bad;
        bad.set_block_id(block.id());
        bad.set_node_id(replica.node_id());
        bad.set_reason(last.message());
        pb::Empty ignored;
        co_await CallMaster("dfs.BadReplica", bad, &ignored);
      }
    } else {
      dead[i] = true;
      spdlog::warn("block {} on {}: {}; trying another replica", block.id(), replica.node_id(),
                   last.ToString());
    }
  }
  if (offset >= end) co_return Status::OK();
  if (corrupt_here) {
    co_return Status::Corruption("no reachable replica has a good copy of the chunk at offset " +
                                 std::to_string(offset) + " (last error: " + last.ToString() + ")");
  }
  co_return Status::Unavailable("no replica could be read (last error: " + last.ToString() + ")");
}

// Reads from one replica starting at *offset (advanced as verified bytes are
// handed to the sink), so a failover resumes where this replica stopped.
awaitable<Status> DfsClient::ReadFromReplica(const pb::LocatedBlock& block,
                                             const pb::ReplicaLocation& replica, int64_t* offset,
                                             int64_t end, const ByteSink& sink) {
  auto conn_or = co_await WorkerConnection(replica.address());
  if (!conn_or.ok()) co_return conn_or.status();
  Connection& conn = **conn_or;
  // Count the bytes this read brings in, however it ends.
  struct Meter {
    DfsClient* client;
    Connection& conn;
    const pb::ReplicaLocation& replica;
    int64_t start = conn.bytes_received();
    ~Meter() {
      if (client->observer_) client->observer_({&replica, nullptr, conn.bytes_received() - start});
    }
  } meter{this, conn, replica};
  // Exactly [*offset, end): the worker sends no byte outside it
  // (docs/wire-format.md, "Reading a block").
  pb::ReadBlockRequest req;
  req.set_block_id(block.id());
  req.set_offset(*offset);
  req.set_length(end - *offset);
  req.set_zstd_level(LinkLevel(inter_dc_zstd_level_, location_.datacenter, replica.datacenter()));
  pb::ReadBlockReply header;
  MR_CO_RETURN_IF_ERROR(co_await conn.SendRequest("dn.ReadBlock", req));
  MR_CO_RETURN_IF_ERROR(co_await conn.ReceiveReply(&header));
  if (header.block_length() != block.bytes()) {
    conn.Close();
    co_return Status::Corruption("replica has " + std::to_string(header.block_length()) +
                                 " bytes, the namespace says " + std::to_string(block.bytes()));
  }
  pb::DataChunk chunk;
  std::string data;
  int64_t next = *offset;  // where the next frame must start
  // The first data frame may wait on the worker's disk; a later one that
  // does not come within cluster.transfer_stall_ms is a hung worker (rpc.h).
  Connection::Expect expect = Connection::Expect::kSlowStart;
  while (true) {
    MR_CO_RETURN_IF_ERROR(co_await conn.ReceiveReply(&chunk, &data, expect));
    expect = Connection::Expect::kPrompt;
    if (Status d = DecodeFrameData(chunk, end - next, &data); !d.ok()) {
      conn.Close();  // a frame that does not decompress: as a checksum mismatch
      co_return d;
    }
    if (chunk.offset() != next || next + static_cast<int64_t>(data.size()) > end) {
      conn.Close();
      co_return Status::ProtocolError(
          "frame of " + std::to_string(data.size()) + " bytes at offset " +
          std::to_string(chunk.offset()) + ", expected one at " + std::to_string(next) +
          " ending by " + std::to_string(end));
    }
    next += static_cast<int64_t>(data.size());
    // One checksum per piece of the data cut at the block's 64 KiB chunk
    // boundaries: the stored checksum for a whole chunk, the worker's for a
    // piece of one.
    const auto sums = RangeChecksums(chunk.offset(), data);
    if (sums.size() != static_cast<size_t>(chunk.checksums_size()) ||
        !std::equal(sums.begin(), sums.end(), chunk.checksums().begin())) {
      conn.Close();  // the stream's remaining frames are of no use
      co_return Status::Corruption("checksum mismatch in bytes received at offset " +
                                   std::to_string(chunk.offset()));
    }
    if (!data.empty()) {
      Status s = sink(std::span<const char>(data.data(), data.size()));
      if (!s.ok()) {
        conn.Close();
        co_return Status::Aborted(s.ToString());
      }
      *offset = next;
    }
    if (chunk.last()) break;
  }
  if (*offset < end) {
    co_return Status::Corruption("replica ended at offset " + std::to_string(next) + ", before " +
                                 std::to_string(end));
  }
  co_return Status::OK();
}

}  // namespace mr::dfs
