// DfsClient: the client side of the DFS, used by mrctl and by workers.
//
// Start here to read or write DFS files from code. Metadata calls go to the
// master over one cached connection; block bytes go straight to and from
// workers.
//
// Writes (Put): the master opens a lease (the file stays invisible), then for
// each block chooses a pipeline by the placement policy; the client streams
// the block in `transfer_chunk_bytes` frames, each with the XXH3 checksum of
// every 64 KiB inside it, to the first node, which stores and forwards to the
// next. A node that fails mid-pipeline is dropped and the block completes on
// the others; if the first node fails, the block is retried on a new
// pipeline that excludes it. CompleteFile makes the file visible atomically.
// Every lease RPC names the file and this client's random id; the master
// refuses a lease that is not both, so a put that outlived its lease (the
// master restarted, or it expired) fails and never touches another file.
//
// Where the client runs (ClientLocation, set by mrctl from its flags or
// inferred from its address; workers pass their own id): reads ask the
// master for replicas nearest to it, and puts tell the master where the
// writer is (hdfs placement puts replica 1 there).
//
// Reads: replicas are tried nearest first, those known to hold a bad chunk
// last; a worker sends exactly the bytes asked for (any offset and length),
// and every piece of them is verified against the checksums it sends. On a
// mismatch, an error or a dead worker, the read resumes at the same offset
// on the next replica; a replica that failed verification is tried again for
// later chunks, so a block is assembled chunk by chunk from several damaged
// replicas. A corrupt replica is reported to the master (dfs.BadReplica),
// which has it repaired (docs/dfs.md, "A replica is corrupt").
//
// Link rates: among a block's replicas in datacenters other than
// location()'s, the client tries first the one whose reads have been
// fastest, and a datacenter never read from before any measured one; the
// master's order stands for the rest (dfs/link_rates.h). Every read from
// another datacenter is timed into link_rates(), which a worker shares
// between its tasks' clients.
//
// Not thread-safe: use one DfsClient per coroutine chain. The LinkRates it
// records into is thread-safe and may be shared.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/rpc.h"
#include "dfs/link_rates.h"
#include "proto/cluster.pb.h"
#include "proto/dfs.pb.h"

namespace mr::dfs {

struct PutOptions {
  int replication = 0;       // 0 = cluster default
  int64_t block_size = 0;    // 0 = cluster default
  bool overwrite = false;
  std::string writer_node;   // set when a worker writes (hdfs placement puts replica 1 there)
  // Replica 1 of every block in this datacenter, under every placement
  // policy (`dfs put --datacenter`). Empty: the policy decides.
  std::string datacenter;
};

// Where a client runs. All empty: unknown (replicas come in the master's
// rotating order; placement treats the writer as outside the cluster).
struct ClientLocation {
  std::string node;        // a worker id, when the client runs beside that worker
  std::string datacenter;  // its datacenter label
  std::string rack;        // its rack label, if racks are configured
};

// Receives file bytes in order. A non-OK status stops the read.
using ByteSink = std::function<Status(std::span<const char>)>;
// Fills `out` with bytes [offset, offset + n) of the data being written.
using ByteSource = std::function<Status(int64_t offset, int64_t n, std::string* out)>;

// Bytes one transfer moved over the network (wire bytes: frames, headers and
// all). `from` or `to` is null for this client's own end.
struct TransferEvent {
  const pb::ReplicaLocation* from = nullptr;
  const pb::ReplicaLocation* to = nullptr;
  int64_t bytes = 0;
};
// Sees every transfer (tasks use it to count traffic by datacenter).
using TrafficObserver = std::function<void(const TransferEvent&)>;

// How errors name a block: "'/in/a.txt' block 1 (id 2)", its index in the
// file as `dfs stat` numbers it (from 0), and its id as workers' logs do.
std::string BlockName(const std::string& path, int index, uint64_t id);

class DfsClient {
 public:
  // The default `reader_node`: a named object, because GCC 12 mishandles
  // class-type temporaries in co_await operands (docs/development.md).
  static inline const std::string kNoReader;

  DfsClient(HostPort master, RpcOptions options,
            int64_t transfer_chunk_bytes = DfsOptions{}.transfer_chunk_bytes);
  ~DfsClient();

  awaitable<Status> Mkdir(const std::string& path, bool parents);
  awaitable<Result<pb::ListReply>> List(const std::string& path);
  // The file or directory with, for files, every block and its live replicas
  // (nearest to `reader_node` first when given, else nearest to location()
  // when it is known).
  awaitable<Result<pb::StatReply>> Stat(const std::string& path,
                                        const std::string& reader_node = kNoReader);
  awaitable<Status> Delete(const std::string& path, bool recursive);
  awaitable<Status> Rename(const std::string& from, const std::string& to);
  awaitable<Result<pb::ClusterStatusReply>> ClusterStatus();

  // Copies the local file `local` to `dfs_path`. NotFound if `local` does
  // not exist; AlreadyExists if `dfs_path` does (unless overwrite).
  awaitable<Status> Put(const std::string& local, const std::string& dfs_path,
                        const PutOptions& options);
  // Writes `length` bytes from `source` as a new DFS file. Besides each
  // block's bytes, `source` is asked for the one byte before each block
  // after the first, which the master records (BlockRef.byte_before).
  awaitable<Status> Write(const std::string& dfs_path, int64_t length, std::string_view first_bytes,
                          const ByteSource& source, const PutOptions& options);
  // Streams the whole file to `sink`. NotFound if missing; FailedPrecondition
  // for a directory; Unavailable if some block has no readable replica;
  // Corruption if some chunk has no good copy on any reachable replica.
  awaitable<Status> Read(const std::string& dfs_path, const ByteSink& sink);
  // Streams bytes [offset, offset + length) of one block (length -1 = to its
  // end), failing over between its replicas chunk by chunk. Moves only those
  // bytes plus framing on the socket, at any offset (map tasks read a few
  // KiB past their split's end this way, jobs/line_reader.h). Corruption when
  // every reachable replica has a bad copy of some chunk; Unavailable when
  // none can be reached. Messages do not name the block: callers add it
  // (BlockName).
  awaitable<Status> ReadBlock(const pb::LocatedBlock& block, int64_t offset, int64_t length,
                              const ByteSink& sink);

  // Any other request to the master (the job.* methods), on the same
  // cached connection.
  awaitable<Status> CallMaster(std::string_view method, const google::protobuf::MessageLite& req,
                               google::protobuf::MessageLite* reply);

  // Called for every block transfer: a read from a replica (counted at this
  // client's socket, failed attempts included), and each hop of a write
  // pipeline (the first counted at this client's socket; the hops workers
  // forward carry the same frames and are reported with the same count).
  void set_traffic_observer(TrafficObserver observer) { observer_ = std::move(observer); }

  // Where this client runs; Stat, Read and Put use it (see above).
  void set_location(ClientLocation location) { location_ = std::move(location); }
  const ClientLocation& location() const { return location_; }
  // The local IP address of the connection to the master (mrctl infers
  // where it runs by matching it with the workers' addresses); empty before
  // the first call to the master or when the socket is gone.
  std::string MasterLocalHost() const;

  // The read rates per source datacenter that order replicas in other
  // datacenters; each client has its own until given one to share (a
  // worker gives every task's client its own, so what one map measured
  // orders the next map's reads). Never null.
  void set_link_rates(std::shared_ptr<LinkRates> rates) { link_rates_ = std::move(rates); }
  const LinkRates& link_rates() const { return *link_rates_; }

  // zstd level of block frames between this client's datacenter and a
  // replica's in another one (cluster.inter_dc_zstd_level; 0 = raw): asked
  // of the replica on reads, applied to the first hop of a write pipeline.
  // Needs location().datacenter; unknown means raw.
  void set_inter_dc_zstd_level(int level) { inter_dc_zstd_level_ = level; }

  // Blocks whose replicas failed verification during this client's reads.
  int64_t corrupt_replicas_seen() const { return corrupt_replicas_seen_; }

  // This client's id in the leases it opens: 16 random hex digits, drawn
  // when the client is made.
  const std::string& client_id() const { return client_id_; }

 private:
  awaitable<Result<Connection*>> WorkerConnection(const std::string& address);
  awaitable<Status> ReadFromReplica(const pb::LocatedBlock& block, const pb::ReplicaLocation& replica,
                                    int64_t* offset, int64_t end, const ByteSink& sink);
  awaitable<Status> WriteOneBlock(uint64_t lease, const std::string& dfs_path, int64_t offset,
                                  int64_t length, const ByteSource& source, bool* lease_refused);
  // The byte before `offset` (> 0) of what `source` writes, for the block's record.
  Result<uint32_t> ByteBefore(const ByteSource& source, int64_t offset);
  // After each attempt on a replica: `bytes` verified since `started` go
  // into link_rates_ (when the replica is in another datacenter).
  void RecordReadRate(const pb::ReplicaLocation& replica, int64_t bytes,
                      std::chrono::steady_clock::time_point started);

  HostPort master_;
  RpcOptions options_;
  int64_t chunk_bytes_;
  std::unique_ptr<Connection> master_conn_;
  std::map<std::string, std::unique_ptr<Connection>> worker_conns_;
  int64_t corrupt_replicas_seen_ = 0;
  TrafficObserver observer_;
  std::string client_id_;
  ClientLocation location_;
  std::shared_ptr<LinkRates> link_rates_ = std::make_shared<LinkRates>();
  int inter_dc_zstd_level_ = ClusterOptions{}.inter_dc_zstd_level;
};

// Streams `length` bytes from `source` to block `block_id` on `pipeline`
// (the first node forwards to the rest). Returns the ids of the nodes that
// committed the block, first node first. Used by clients and by workers
// copying a block (re-replication). When `wire_bytes` is given, it receives
// the bytes sent on the socket to the first node, then those each later hop
// carried as its sender counted them (fewer entries when a node did not
// commit or did not say). `zstd_level` > 0 compresses the frames to the
// first node (LinkLevel of the hop, dfs/wire_codec.h); the nodes decide
// for the later hops.
awaitable<Result<std::vector<std::string>>> WriteBlockPipeline(
    const RpcOptions& options, uint64_t block_id,
    const std::vector<pb::ReplicaLocation>& pipeline, int64_t length, int64_t chunk_bytes,
    const ByteSource& source, std::vector<int64_t>* wire_bytes = nullptr, int zstd_level = 0);

}  // namespace mr::dfs
