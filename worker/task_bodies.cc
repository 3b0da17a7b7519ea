// The bodies of map and reduce tasks: the network around task_runner.h.
//
// A task thread owns a private io_context and drives its coroutines (DFS
// reads and writes, calls to the master, shuffle fetches) to completion with
// RunOn(), so the blocking task code of task_runner.h can call them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <optional>
#include <set>
#include <thread>

#include <spdlog/spdlog.h>

#include "dfs/client.h"
#include "dfs/wire_codec.h"
#include "jobs/codec.h"
#include "jobs/decompressed_input.h"
#include "worker/segment_merge.h"
#include "worker/task_child.h"
#include "worker/task_env.h"
#include "worker/task_runner.h"
#include "worker/task_tracker.h"

namespace mr::worker {
namespace {

template <typename T>
awaitable<void> Capture(awaitable<T> op, std::optional<T>* out) {
  *out = co_await std::move(op);
}

// Runs `op` on `io` (owned by the calling thread) until it completes.
template <typename T>
T RunOn(asio::io_context& io, awaitable<T> op) {
  std::optional<T> out;
  std::exception_ptr error;
  asio::co_spawn(io, Capture(std::move(op), &out), [&](std::exception_ptr e) { error = e; });
  io.restart();
  io.run();
  if (error) std::rethrow_exception(error);
  return std::move(*out);
}

// Adds `bytes` moved between nodes a and b to the right counter.
// Also counts them for /metrics under `kind`, by the datacenter pair.
void Count(WorkerMetrics* metrics, const char* kind, pb::Traffic* t, const std::string& a_node,
           const std::string& a_dc, const std::string& b_node, const std::string& b_dc,
           int64_t bytes) {
  if (metrics) metrics->Bytes(kind, a_dc, b_dc, bytes);
  if (a_node == b_node) {
    t->set_local(t->local() + bytes);
  } else if (a_dc == b_dc) {
    t->set_same_dc(t->same_dc() + bytes);
  } else {
    t->set_other_dc(t->other_dc() + bytes);
  }
}

using SteadyClock = std::chrono::steady_clock;

int64_t UsSince(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - t).count();
}

// Records `us` microseconds as phase `name` of the report, in whole ms
// (docs/jobs.md, "Task timestamps").
void SetPhase(pb::TaskReport* r, const char* name, int64_t us) {
  (*r->mutable_phase_ms())[name] = std::max<int64_t>(us, 0) / 1000;
}

// Calls the master on a cached connection, reconnecting when needed.
awaitable<Status> CallMaster(HostPort master, RpcOptions options,
                             std::unique_ptr<Connection>* conn, std::string method,
                             const google::protobuf::MessageLite* request,
                             google::protobuf::MessageLite* reply) {
  if (!*conn || !(*conn)->IsFresh()) {
    auto c = co_await Connect(master, options);
    if (!c.ok()) co_return c.status();
    *conn = std::move(c).value();
  }
  Status s = co_await (*conn)->Call(method, *request, reply);
  if (!s.ok() && !(*conn)->is_open()) conn->reset();
  co_return s;
}

// One map output to fetch, and how it went.
struct Fetch {
  pb::MapOutputLocation from;
  std::string path;       // local file for the segment
  Status status;
  int64_t wire_bytes = 0; // received on the socket
  bool local = false;     // `status` is our own disk's failure, not the mapper's
  int zstd_level = 0;     // asked of the mapper (another datacenter), 0 = as stored
  int zstd_window_log = 0;  // with zstd_level: long-distance matching window (0 = off)
};

// Fetches one segment into f->path.
awaitable<Status> FetchOne(RpcOptions options, std::map<std::string, std::unique_ptr<Connection>>* conns,
                           int64_t job, int32_t partition, Fetch* f,
                           const std::atomic<bool>* cancel) {
  auto& conn = (*conns)[f->from.address()];
  if (!conn || !conn->IsFresh()) {
    auto address = ParseHostPort(f->from.address());
    if (!address.ok()) co_return address.status();
    auto c = co_await Connect(*address, options, options.transfer_stall_ms);
    if (!c.ok()) co_return c.status();
    conn = std::move(c).value();
  }
  const int64_t before = conn->bytes_received();
  pb::FetchRequest req;
  req.set_job_id(job);
  req.set_map_index(f->from.map_index());
  req.set_attempt(f->from.attempt());
  req.set_partition(partition);
  req.set_zstd_level(f->zstd_level);
  if (f->zstd_level > 0) req.set_zstd_window_log(f->zstd_window_log);
  pb::FetchReply header;
  Status s = co_await conn->SendRequest("shuffle.Fetch", req);
  if (s.ok()) s = co_await conn->ReceiveReply(&header);
  const int fd = s.ok() ? ::open(f->path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
  if (s.ok() && fd < 0) {
    s = Status::IOError("cannot create '" + f->path + "': " + std::strerror(errno));
    f->local = true;
    conn->Close();  // the segment's chunks follow the header
  }
  int64_t got = 0;
  pb::FetchChunk chunk;
  std::string data;
  // The first chunk may wait on the mapper's disk or its recompression; a
  // later one that does not come within cluster.transfer_stall_ms is a hung
  // mapper (common/rpc.h), reported to the master below (RunReduce).
  Connection::Expect expect = Connection::Expect::kSlowStart;
  while (s.ok()) {
    s = co_await conn->ReceiveReply(&chunk, &data, expect);
    expect = Connection::Expect::kPrompt;
    if (!s.ok()) break;
    const ssize_t wrote = ::write(fd, data.data(), data.size());
    if (wrote != static_cast<ssize_t>(data.size())) {
      s = Status::IOError("cannot write '" + f->path + "': " +
                          (wrote < 0 ? std::strerror(errno) : "short write"));
      f->local = true;
      conn->Close();  // the rest of the stream must not be read as replies
      break;
    }
    got += static_cast<int64_t>(data.size());
    if (chunk.last()) break;
    if (*cancel) {
      s = Status::Aborted("killed");
      conn->Close();
    }
  }
  if (fd >= 0) ::close(fd);
  if (s.ok() && header.bytes() >= 0 && got != header.bytes()) {  // -1: recompressed, size unknown
    s = Status::Corruption("fetched " + std::to_string(got) + " of " + std::to_string(header.bytes()) + " bytes");
  }
  f->wire_bytes += conn->bytes_received() - before;
  if (!conn->is_open()) conn.reset();
  co_return s;
}

// One of `parallel` fetchers: takes the next fetch until none is left.
awaitable<void> Fetcher(RpcOptions options, int64_t job, int32_t partition,
                        std::vector<Fetch>* fetches, size_t* next, const std::atomic<bool>* cancel) {
  std::map<std::string, std::unique_ptr<Connection>> conns;
  while (*next < fetches->size() && !*cancel) {
    Fetch& f = (*fetches)[(*next)++];
    f.status = co_await FetchOne(options, &conns, job, partition, &f, cancel);
  }
}

// Sleeps about `ms`, waking early when cancelled.
void Nap(int64_t ms, const std::atomic<bool>& cancel) {
  for (int64_t slept = 0; slept < ms && !cancel; slept += 20) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(20, ms - slept)));
  }
}

jobs::Params ParamsOf(const pb::TaskSpec& spec) {
  return jobs::Params(spec.params().begin(), spec.params().end());
}

// The attempt's file in the DFS: "<output_dir>/r-3-a0".
std::string AttemptFile(const pb::TaskSpec& spec) {
  return spec.output_dir() + "/" + (spec.is_map() ? "m-" : "r-") + std::to_string(spec.index()) +
         "-a" + std::to_string(spec.attempt());
}

// The local output file to put into the DFS: `local` itself, or, when the
// job asked for compressed output, `local` compressed into local + ".gz"
// (or ".zst"). Sets *bytes to that file's size.
Result<std::string> OutputToPut(const pb::TaskSpec& spec, const std::string& local, int64_t* bytes) {
  MR_ASSIGN_OR_RETURN(const jobs::Codec codec, jobs::ParseOutputCompression(spec.output_compression()));
  std::string put = local;
  if (codec != jobs::Codec::kNone) {
    put = local + jobs::CodecSuffix(codec);
    MR_RETURN_IF_ERROR(jobs::CompressFile(codec, local, put));
    ::unlink(local.c_str());
  }
  struct stat st {};
  if (::stat(put.c_str(), &st) != 0) return Status::IOError("output '" + put + "' vanished");
  *bytes = st.st_size;
  return put;
}

}  // namespace

Result<jobs::JobEnv> TaskTracker::EnvFor(Task& task, asio::io_context& io, dfs::DfsClient& client) {
  jobs::JobEnv env;
  env.cancel = &task.cancel;
  env.counters = &task.counters;
  env.task_timeout_ms = config_.jobs.task_timeout_ms;
  const std::string job_dir = root_ + "/job-" + std::to_string(task.spec.job_id());
  auto get = [&](const std::string& dfs_path, const std::string& local) -> Status {
    const int fd = ::open(local.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return Status::IOError("cannot create '" + local + "': " + std::strerror(errno));
    dfs::ByteSink sink = [fd, &local](std::span<const char> d) {
      if (::write(fd, d.data(), d.size()) == static_cast<ssize_t>(d.size())) return Status::OK();
      return Status::IOError("cannot write '" + local + "'");
    };
    Status s = RunOn(io, client.Read(dfs_path, sink));
    ::close(fd);
    return s;
  };
  MR_ASSIGN_OR_RETURN(const std::string shipped,
                      job_files_.Ensure(task.spec.job_id(), job_dir, ParamsOf(task.spec), get));
  // The user code's own directory, with the shipped files linked in
  // (task_env.h); RunTask removes it when the attempt ends.
  env.files_dir = task.dir + "/work";
  MR_RETURN_IF_ERROR(MakeWorkDir(env.files_dir, shipped));
  env.child_env = HadoopTaskVariables(config_.cluster.name, task.spec);
  env.log = [log = task.log](std::string_view bytes) { log->Append(bytes); };
  return env;
}

// ---------------------------------------------------------------- map

Status TaskTracker::RunMap(Task& task) {
  const pb::TaskSpec& spec = task.spec;
  pb::TaskReport& report = task.report;
  asio::io_context io;
  dfs::DfsClient client(config_.master.address,
                        RpcOptions::FromConfig(config_, "worker " + self_.id + " task"),
                        config_.dfs.transfer_chunk_bytes);
  client.set_location({self_.id, self_.datacenter, self_.rack});
  client.set_link_rates(link_rates_);
  client.set_inter_dc_zstd_level(config_.cluster.inter_dc_zstd_level);
  // The job's shipped files first: their reads are not the map's input.
  MR_ASSIGN_OR_RETURN(const jobs::JobEnv env, EnvFor(task, io, client));
  client.set_traffic_observer([&](const dfs::TransferEvent& e) {
    if (e.to == nullptr) {  // a read: from a replica to us
      Count(metrics_, "map_input", report.mutable_input(), e.from->node_id(), e.from->datacenter(), self_.id,
            self_.datacenter, e.bytes);
    } else {  // a hop of a map-only job's output
      Count(metrics_, "output", report.mutable_output(), e.from ? e.from->node_id() : self_.id,
            e.from ? e.from->datacenter() : self_.datacenter, e.to->node_id(), e.to->datacenter(),
            e.bytes);
    }
  });
  // Phases: setup (finding the blocks), read (the map waiting in `read`),
  // map (the rest until map_done), sort (the final sort, combine and
  // spill), write (a map-only job's output into the DFS).
  const auto t0 = SteadyClock::now();
  int64_t read_us = 0;
  int64_t* raw_read_us = &read_us;  // a compressed input's raw reads: on the decode thread
  const std::string& reader = self_.id;
  auto stat = RunOn(io, client.Stat(spec.file(), reader));
  if (!stat.ok()) return stat.status().WithContext("input " + spec.file());
  SetPhase(&report, "setup", UsSince(t0));
  const auto t_map = SteadyClock::now();
  std::vector<pb::LocatedBlock> blocks(stat->blocks().begin(), stat->blocks().end());

  // Bytes [from, from + n) of blocks[i] over the network into `sink`. When no
  // replica can be read (its holders restart, say), waits for one with
  // backoff, asking the master afresh where the block is, for up to
  // jobs.block_wait_ms; then fails with input_unavailable set. `out` is
  // what the sink appends to; a failed try's bytes are dropped from it.
  auto read_remote = [&](size_t i, int64_t from, int64_t n, const dfs::ByteSink& sink,
                         std::string* out) -> Status {
    const size_t before = out->size();
    const auto start = std::chrono::steady_clock::now();
    int64_t backoff_ms = 100;
    while (true) {
      Status s = RunOn(io, client.ReadBlock(blocks[i], from, n, sink));
      const std::string what = dfs::BlockName(spec.file(), static_cast<int>(i), blocks[i].id());
      if (s.ok() || task.cancel) return s;
      if (!s.IsUnavailable()) return s.WithContext(what);  // a corrupt block names its file
      out->resize(before);
      const int64_t waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now() - start).count();
      if (waited >= config_.jobs.block_wait_ms) {
        report.set_input_unavailable(true);
        return Status::Unavailable(what + " had no readable replica for " + std::to_string(waited) +
                                   " ms (jobs.block_wait_ms); last error: " + s.message());
      }
      if (backoff_ms == 100) {  // the first failure
        task.log->Line(what + " cannot be read (" + s.message() + "); waiting for a replica");
        spdlog::warn("task {}: {} cannot be read ({}); waiting up to {} ms for a replica",
                     task.dir.substr(root_.size() + 1), what, s.message(),
                     config_.jobs.block_wait_ms);
      }
      Nap(std::min(backoff_ms, config_.jobs.block_wait_ms - waited), task.cancel);
      backoff_ms = std::min<int64_t>(backoff_ms * 2, 5000);
      if (task.cancel) return Status::Aborted("killed");
      auto fresh = RunOn(io, client.Stat(spec.file(), reader));
      if (!fresh.ok()) continue;  // the master is unreachable too: wait on
      for (const pb::LocatedBlock& b : fresh->blocks()) {
        if (b.id() == blocks[i].id()) blocks[i] = b;
      }
    }
  };

  // Bytes [offset, offset + n) of the input file: from our own block store
  // when we hold the block, else over the network from the nearest replica.
  std::set<uint64_t> logged_blocks;  // blocks whose source the log names already
  jobs::LineReader::ReadFn read = [&](int64_t offset, int64_t n, std::string* out) -> Status {
    out->clear();
    if (task.cancel) return Status::Aborted("killed");
    const auto t_read = SteadyClock::now();
    struct AddOnExit {
      int64_t* us;
      SteadyClock::time_point t;
      ~AddOnExit() { *us += UsSince(t); }
    } timed{raw_read_us, t_read};
    dfs::ByteSink sink = [out](std::span<const char> d) {
      out->append(d.data(), d.size());
      return Status::OK();
    };
    std::string part;
    for (size_t i = 0; i < blocks.size(); ++i) {
      const pb::LocatedBlock& b = blocks[i];
      const int64_t from = std::max(offset, b.offset());
      const int64_t to = std::min(offset + n, b.offset() + b.bytes());
      if (from >= to) continue;
      const bool first_read = logged_blocks.insert(b.id()).second;
      // A read within one local block (nearly all) lands in *out directly.
      std::string* into = out->empty() ? out : &part;
      if (store_.Contains(b.id()) && store_.Read(b.id(), from - b.offset(), to - from, into).ok()) {
        if (first_read) task.log->Line("reading block " + std::to_string(b.id()) + " from this worker's store");
        Count(metrics_, "map_input", report.mutable_input(), self_.id, self_.datacenter, self_.id,
              self_.datacenter, static_cast<int64_t>(into->size()));
        if (into == &part) out->append(part);
        continue;
      }
      if (into == out) out->clear();  // a failed read may have left bytes in it
      // (A corrupt local copy is found again, reported and dropped by our
      // own block server when the nearest-first read below asks it.)
      if (first_read) {
        task.log->Line("reading block " + std::to_string(b.id()) + " from the nearest of its " +
                       std::to_string(b.replicas_size()) + " replica(s) over the network");
      }
      MR_RETURN_IF_ERROR(read_remote(i, from - b.offset(), to - from, sink, out));
    }
    task.bytes_read += static_cast<int64_t>(out->size());
    return Status::OK();
  };

  MapTaskSpec m;
  m.job = spec.job();
  m.params = ParamsOf(spec);
  m.env = env;
  m.reducers = spec.reducers();
  m.file = spec.file();
  m.file_length = spec.file_length();
  m.split_offset = spec.split_offset();
  m.split_length = spec.split_length();
  // A compressed file is one split, read whole through its decoder: the map
  // sees decompressed lines of a length found at their end.
  const jobs::Codec codec = jobs::CodecOfPath(spec.file());
  std::optional<jobs::DecompressedInput> decompressed;
  int64_t decode_thread_read_us = 0;  // overlaps the map: not a phase
  if (codec != jobs::Codec::kNone) {
    raw_read_us = &decode_thread_read_us;
    decompressed.emplace(codec, spec.file(), spec.file_length(), read);
    read = [&read_us, decoded = decompressed->AsReadFn()](int64_t offset, int64_t n, std::string* out) {
      const auto t_read = SteadyClock::now();
      Status s = decoded(offset, n, out);
      read_us += UsSince(t_read);
      return s;
    };
    m.file_length = m.split_length = jobs::LineReader::kUnknownLength;
    m.split_offset = 0;
  }
  for (const pb::LocatedBlock& b : blocks) {
    if (b.offset() == spec.split_offset() && b.has_byte_before()) {
      m.byte_before = static_cast<int>(b.byte_before() & 0xff);
    }
  }
  m.sort_buffer_bytes = config_.jobs.sort_buffer_bytes;
  m.work_dir = task.dir;
  m.progress = [&task](const std::vector<int64_t>& partition_bytes) {
    std::lock_guard lock(task.progress_mu);
    task.partition_bytes = partition_bytes;
  };
  SteadyClock::time_point t_sort{};
  m.map_done = [&t_sort] { t_sort = SteadyClock::now(); };
  // A plug-in's map runs in mr-task, which times no sort phase of its own:
  // its sort is inside "map".
  const jobs::JobInfo* info = jobs::FindJob(spec.job());
  Result<MapTaskResult> ran = info != nullptr && info->runs_user_code
                                  ? RunMapInChild(m, read, ChildOptionsFor(task, env))
                                  : RunMapTask(m, read);
  if (decompressed) {
    if (!ran.ok() && decompressed->corrupt()) report.set_input_corrupt(true);
    // A compressed map's input bytes are the compressed bytes it read (the
    // file's length), as DFS bytes are counted everywhere else.
    if (ran.ok()) ran->input_bytes = decompressed->compressed_read();
    // Joins its decode thread, which made the raw reads (their timer, the
    // report's input counts, `io`): from here on they are ours alone.
    decompressed.reset();
  }
  MR_ASSIGN_OR_RETURN(MapTaskResult result, std::move(ran));
  const auto t_end = SteadyClock::now();
  if (t_sort == SteadyClock::time_point{}) t_sort = t_end;  // map-only or mr-task: no sort phase
  SetPhase(&report, "read", read_us);
  SetPhase(&report, "map", std::chrono::duration_cast<std::chrono::microseconds>(t_sort - t_map).count() - read_us);
  if (spec.reducers() > 0 && t_sort != t_end) SetPhase(&report, "sort", UsSince(t_sort));
  report.set_bytes_read(result.input_bytes);
  report.set_raw_output_bytes(result.raw_output_bytes);
  report.set_records_in(result.records_in);
  report.set_records_out(result.records_out);
  if (spec.reducers() > 0) {
    task.counters.AddFramework(jobs::kCombineInputRecords, result.combine_records_in);
    task.counters.AddFramework(jobs::kCombineOutputRecords, result.combine_records_out);
    task.counters.AddFramework(jobs::kSpilledRecords, result.spilled_records);
  }
  for (const SegmentInfo& s : result.index.segments) {
    report.add_partition_bytes(s.compressed_bytes);
    report.add_partition_raw_bytes(s.raw_bytes);
  }
  if (spec.reducers() > 0) {
    task.output = {result.output_path, result.index};
    return Status::OK();
  }
  // Map-only: the output goes into the DFS now.
  int64_t output_bytes = 0;
  MR_ASSIGN_OR_RETURN(const std::string output, OutputToPut(spec, result.output_path, &output_bytes));
  const std::string dfs_path = AttemptFile(spec);
  dfs::PutOptions put;
  put.replication = spec.output_replication();
  put.writer_node = self_.id;
  put.overwrite = true;
  MR_RETURN_IF_ERROR(RunOn(io, client.Put(output, dfs_path, put)));
  SetPhase(&report, "write", UsSince(t_end));
  report.set_output_file(dfs_path);
  report.set_output_bytes(output_bytes);
  report.set_output_records(result.records_out);
  return Status::OK();
}

// ---------------------------------------------------------------- reduce

Status TaskTracker::RunReduce(Task& task) {
  const pb::TaskSpec& spec = task.spec;
  pb::TaskReport& report = task.report;
  asio::io_context io;
  const RpcOptions options = RpcOptions::FromConfig(config_, "worker " + self_.id + " task");
  std::unique_ptr<Connection> master;
  // Output replication is counted; the shipped files' reads are not.
  dfs::DfsClient client(config_.master.address, options, config_.dfs.transfer_chunk_bytes);
  client.set_inter_dc_zstd_level(config_.cluster.inter_dc_zstd_level);
  MR_ASSIGN_OR_RETURN(const jobs::JobEnv env, EnvFor(task, io, client));
  client.set_traffic_observer([&](const dfs::TransferEvent& e) {
    if (e.to == nullptr) return;
    Count(metrics_, "output", report.mutable_output(), e.from ? e.from->node_id() : self_.id,
          e.from ? e.from->datacenter() : self_.datacenter, e.to->node_id(), e.to->datacenter(), e.bytes);
  });

  // 1. The shuffle: fetch segment `index` of every map output, polling the
  //    master for where finished maps are until all are here.
  // Phases: fetch (the shuffle, waiting for maps included), reduce (the
  // streaming merge and Reduce calls), write (the local file and the DFS).
  const auto t0 = SteadyClock::now();
  int64_t write_us = 0;
  const int maps = spec.maps();
  std::vector<std::string> files(static_cast<size_t>(maps));
  std::vector<bool> fetched(static_cast<size_t>(maps), false);
  int done = 0, master_failures = 0;
  while (done < maps) {
    if (task.cancel) return Status::Aborted("killed");
    pb::MapOutputsRequest ask;
    ask.set_job_id(spec.job_id());
    ask.set_reduce_index(spec.index());
    pb::MapOutputsReply where;
    Status s = RunOn(io, CallMaster(config_.master.address, options, &master, "job.MapOutputs", &ask, &where));
    if (!s.ok()) {
      if (++master_failures >= 20) return s.WithContext("asking the master for map outputs");
      Nap(config_.cluster.heartbeat_interval_ms, task.cancel);
      continue;
    }
    master_failures = 0;
    if (where.job_over()) return Status::Aborted("the job is over");
    std::vector<Fetch> batch;
    for (const auto& loc : where.outputs()) {
      if (loc.map_index() < 0 || loc.map_index() >= maps || fetched[static_cast<size_t>(loc.map_index())]) continue;
      batch.push_back({loc, task.dir + "/map-" + std::to_string(loc.map_index()), Status::OK(), 0, false,
                       dfs::LinkLevel(config_.cluster.inter_dc_zstd_level, self_.datacenter, loc.datacenter()),
                       config_.cluster.inter_dc_zstd_window_log});
    }
    size_t next = 0;
    const int parallel = std::min<int>(config_.jobs.parallel_fetches, static_cast<int>(batch.size()));
    for (int i = 0; i < parallel; ++i) {
      asio::co_spawn(io, Fetcher(options, spec.job_id(), spec.index(), &batch, &next, &task.cancel),
                     asio::detached);
    }
    io.restart();
    io.run();
    int progress = 0;
    for (Fetch& f : batch) {
      Count(metrics_, "shuffle", report.mutable_shuffle(), f.from.worker_id(), f.from.datacenter(), self_.id,
            self_.datacenter, f.wire_bytes);
      if (f.status.ok()) {
        fetched[static_cast<size_t>(f.from.map_index())] = true;
        files[static_cast<size_t>(f.from.map_index())] = f.path;
        ++done, ++progress;
        task.reduce_progress = static_cast<float>(done) / static_cast<float>(3 * maps);
        continue;
      }
      if (task.cancel) return Status::Aborted("killed");
      ::unlink(f.path.c_str());
      // Our own disk failed, not the mapper: this attempt fails (and runs
      // again elsewhere); the map is not blamed.
      if (f.local) {
        return f.status.WithContext("storing map " + std::to_string(f.from.map_index()) +
                                    "'s output");
      }
      pb::FetchFailedRequest failed;
      failed.set_job_id(spec.job_id());
      failed.set_map_index(f.from.map_index());
      failed.set_attempt(f.from.attempt());
      failed.set_reduce_index(spec.index());
      failed.set_reason(f.status.ToString());
      pb::Empty ignored;
      RunOn(io, CallMaster(config_.master.address, options, &master, "job.FetchFailed", &failed, &ignored));
    }
    if (progress == 0 && done < maps) Nap(config_.jobs.map_outputs_poll_ms, task.cancel);
  }

  SetPhase(&report, "fetch", UsSince(t0));
  task.log->Line("fetched the outputs of " + std::to_string(maps) + " maps: " +
                 std::to_string(report.shuffle().local() + report.shuffle().same_dc() +
                                report.shuffle().other_dc()) + " bytes");
  task.reduce_progress = 2.0f / 3.0f;
  const auto t_reduce = SteadyClock::now();

  // At most jobs.merge_factor files open at once, whatever the map count.
  MR_ASSIGN_OR_RETURN(files, MergeToFanIn(std::move(files), config_.jobs.merge_factor, task.dir,
                                          [&] { return task.cancel.load(); }));

  // 2. Merge and reduce into a local file (a plug-in's in mr-task).
  const std::string local = task.dir + "/output";
  ReduceTaskSpec r;
  r.job = spec.job();
  r.params = ParamsOf(spec);
  r.env = env;
  r.index = spec.index();
  r.reducers = spec.reducers();
  const jobs::JobInfo* info = jobs::FindJob(spec.job());
  if (info != nullptr && info->runs_user_code) {
    auto result = RunReduceInChild(r, files, local, task.dir, ChildOptionsFor(task, env));
    if (!result.ok()) return result.status();
    for (const std::string& file : files) ::unlink(file.c_str());
    SetPhase(&report, "reduce", UsSince(t_reduce));
    return PutReduceOutput(task, client, io, local, *result, /*write_us=*/0);
  }
  MR_ASSIGN_OR_RETURN(auto inputs, OpenSegmentFiles(files));
  const int fd = ::open(local.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("cannot create '" + local + "'");
  auto result = RunReduceTask(r, std::move(inputs), [&](std::string_view chunk) -> Status {
    if (task.cancel) return Status::Aborted("killed");
    const auto t_write = SteadyClock::now();
    const bool written = ::write(fd, chunk.data(), chunk.size()) == static_cast<ssize_t>(chunk.size());
    write_us += UsSince(t_write);
    if (!written) return Status::IOError("cannot write '" + local + "': " + std::strerror(errno));
    return Status::OK();
  });
  ::close(fd);
  if (!result.ok()) return result.status();
  for (const std::string& file : files) ::unlink(file.c_str());
  SetPhase(&report, "reduce", UsSince(t_reduce) - write_us);
  return PutReduceOutput(task, client, io, local, *result, write_us);
}

// 3. Into the DFS, under the attempt's name; the master commits it.
// `write_us`: time already spent writing the local file (the "write" phase
// adds the put to it).
Status TaskTracker::PutReduceOutput(Task& task, dfs::DfsClient& client, asio::io_context& io,
                                    const std::string& local, const ReduceTaskResult& result,
                                    int64_t write_us) {
  const pb::TaskSpec& spec = task.spec;
  pb::TaskReport& report = task.report;
  const auto t_put = SteadyClock::now();
  task.reduce_progress = 0.9f;
  const std::string dfs_path = AttemptFile(spec);
  dfs::PutOptions put;
  put.replication = spec.output_replication();
  put.writer_node = self_.id;
  put.overwrite = true;
  int64_t output_bytes = 0;
  MR_ASSIGN_OR_RETURN(const std::string output, OutputToPut(spec, local, &output_bytes));
  MR_RETURN_IF_ERROR(RunOn(io, client.Put(output, dfs_path, put)));
  SetPhase(&report, "write", write_us + UsSince(t_put));
  report.set_output_file(dfs_path);
  report.set_output_bytes(output_bytes);
  report.set_output_records(result.output_records);
  report.set_records_in(result.input_records);
  task.counters.AddFramework(jobs::kReduceInputGroups, result.input_groups);
  return Status::OK();
}

ChildOptions TaskTracker::ChildOptionsFor(Task& task, const jobs::JobEnv& env) const {
  ChildOptions o;
  o.exe = TaskChildPath();
  o.cancel = &task.cancel;
  o.timeout_ms = env.task_timeout_ms;
  o.cwd = env.files_dir;
  o.env = env.child_env;
  o.log = env.log;
  const auto& params = task.spec.params();
  if (auto it = params.find("timeout_ms"); it != params.end() && it->second != "0") {
    try {
      o.timeout_ms = std::stoll(it->second);
    } catch (const std::exception&) {
    }
  }
  return o;
}

}  // namespace mr::worker
