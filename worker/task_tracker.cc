// TaskTracker: task threads, heartbeat reports and the shuffle server. The
// task bodies are in task_bodies.cc.
#include "worker/task_tracker.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "jobs/child_process.h"
#include "worker/segment_recompress.h"

namespace mr::worker {
namespace fs = std::filesystem;

TaskTracker::TaskTracker(const ClusterConfig& config, const WorkerOptions& self,
                         dfs::BlockStore& store, DiskHealth& disk, std::function<void()> wake)
    : config_(config), self_(self), store_(store), disk_(disk), wake_(std::move(wake)),
      root_(self.data_dir + "/tasks"),
      logs_(self.data_dir + "/task-logs", config.task_logs.limit_kb * 1024) {
  std::error_code ec;
  fs::remove_all(root_, ec);  // a previous run's tasks: the master forgot them
  SweepLogs(true);            // their logs stay, as long as [task_logs] keeps them
}

TaskTracker::~TaskTracker() { Reset(); }

std::string TaskTracker::TaskDir(const pb::TaskSpec& spec) const {
  return root_ + "/job-" + std::to_string(spec.job_id()) + "/" + (spec.is_map() ? "m-" : "r-") +
         std::to_string(spec.index()) + "-" + std::to_string(spec.attempt());
}

// ---------------------------------------------------------------- heartbeat

void TaskTracker::Fill(pb::HeartbeatRequest* beat) {
  Reap();
  std::lock_guard lock(mu_);
  int maps = 0, reduces = 0;
  for (const auto& t : tasks_) {
    if (t->ended) continue;
    (t->spec.is_map() ? maps : reduces)++;
    pb::TaskReport* r = beat->add_tasks();
    r->set_job_id(t->spec.job_id());
    r->set_is_map(t->spec.is_map());
    r->set_index(t->spec.index());
    r->set_attempt(t->spec.attempt());
    r->set_state(pb::TaskReport::RUNNING);
    r->set_bytes_read(t->bytes_read);
    if (t->spec.is_map()) {
      const int64_t length = t->spec.split_length();
      r->set_progress(length > 0 ? std::min(1.0f, static_cast<float>(t->bytes_read) / length) : 0.0f);
    } else {
      r->set_progress(t->reduce_progress);
    }
    std::lock_guard progress_lock(t->progress_mu);
    for (int64_t b : t->partition_bytes) r->add_partition_raw_bytes(b);
  }
  for (auto& r : ended_) *beat->add_tasks() = std::move(r);
  ended_.clear();
  beat->set_free_map_slots(std::max(0, self_.map_slots - maps));
  beat->set_free_reduce_slots(std::max(0, self_.reduce_slots - reduces));
  for (const dfs::LinkRateStats& l : link_rates_->Stats()) {
    if (l.samples <= 0) continue;
    pb::LinkRate* rate = beat->add_link_rates();
    rate->set_datacenter(l.datacenter);
    rate->set_bytes_per_s(l.estimate);
  }
}

void TaskTracker::Unsent(const pb::HeartbeatRequest& beat) {
  std::lock_guard lock(mu_);
  for (const auto& r : beat.tasks()) {
    if (r.state() != pb::TaskReport::RUNNING) ended_.push_back(r);
  }
}

void TaskTracker::ForgetJobLocked(int64_t job) {
  over_.insert(job);
  for (auto& t : tasks_) {
    if (t->spec.job_id() == job) t->cancel = true;
  }
  for (auto it = outputs_.begin(); it != outputs_.end();) {
    it = std::get<0>(it->first) == job ? outputs_.erase(it) : std::next(it);
  }
}

void TaskTracker::ForgetJobs(const google::protobuf::RepeatedField<int64_t>& jobs) {
  std::lock_guard lock(mu_);
  for (int64_t job : jobs) ForgetJobLocked(job);
}

void TaskTracker::Apply(const pb::HeartbeatReply& reply) {
  std::lock_guard lock(mu_);
  for (int64_t job : reply.finished_jobs()) ForgetJobLocked(job);
  for (const pb::TaskRef& k : reply.kills()) {
    for (auto& t : tasks_) {
      const pb::TaskSpec& s = t->spec;
      if (s.job_id() == k.job_id() && s.is_map() == k.is_map() && s.index() == k.index() &&
          s.attempt() == k.attempt()) {
        t->cancel = true;
      }
    }
  }
  for (const pb::TaskSpec& spec : reply.launches()) Launch(spec);
}

// REQUIRES: mu_ held.
void TaskTracker::Launch(const pb::TaskSpec& spec) {
  // An older output of the same attempt number (kept across a master
  // restart, then not wanted) gives way to the new attempt.
  if (spec.is_map()) outputs_.erase({spec.job_id(), spec.index(), spec.attempt()});
  auto task = std::make_unique<Task>();
  task->spec = spec;
  task->dir = TaskDir(spec);
  auto log = logs_.Create(spec.job_id(), spec.is_map(), spec.index(), spec.attempt());
  if (!log.ok()) {
    spdlog::warn("task {}: {}; its log is kept in memory only", task->dir.substr(root_.size() + 1),
                 log.status().ToString());
    log = TaskLog::Create("", config_.task_logs.limit_kb * 1024);
  }
  task->log = std::move(log).value();
  Task* raw = task.get();
  tasks_.push_back(std::move(task));
  raw->thread = std::thread([this, raw] { RunTask(raw); });
  spdlog::info("task {}: job {} {} {} attempt {}", raw->dir.substr(root_.size() + 1), spec.job_id(),
               spec.job(), spec.is_map() ? "map" : "reduce", spec.attempt());
}

void TaskTracker::RunTask(Task* task) {
  const auto start = std::chrono::steady_clock::now();
  const auto wall_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch()).count();
  };
  task->report.set_start_wall_ms(wall_ms());
  const int64_t cpu_us = jobs::ThreadCpuUs(), child_cpu_us = jobs::ReapedChildCpuUs();
  if (metrics_) metrics_->TaskStarted(task->spec.is_map());
  const pb::TaskSpec& spec = task->spec;
  LogStart(*task);
  Status s;
  try {
    std::error_code ec;
    fs::create_directories(task->dir, ec);
    if (ec) {
      s = Status::IOError("cannot create '" + task->dir + "': " + ec.message());
    } else {
      s = spec.is_map() ? RunMap(*task) : RunReduce(*task);
    }
  } catch (const std::exception& e) {
    s = Status::Internal(std::string("task threw: ") + e.what());
  }
  pb::TaskReport& r = task->report;
  r.set_job_id(spec.job_id());
  r.set_is_map(spec.is_map());
  r.set_index(spec.index());
  r.set_attempt(spec.attempt());
  r.set_run_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start).count());
  r.set_end_wall_ms(wall_ms());
  // CPU: this thread's and that of the children it reaped (streaming
  // commands, mr-task): docs/logs-and-counters.md.
  task->counters.AddFramework(jobs::kCpuMilliseconds,
                              (jobs::ThreadCpuUs() - cpu_us + jobs::ReapedChildCpuUs() - child_cpu_us) / 1000);
  if (const int64_t dropped = task->counters.dropped(); dropped > 0) {
    task->counters.AddFramework(jobs::kUserCountersDropped, dropped);
  }
  for (const jobs::Counter& c : task->counters.Values()) {
    pb::Counter* out = r.add_counters();
    out->set_group(c.group);
    out->set_name(c.name);
    out->set_value(c.value);
  }
  r.set_status(task->counters.status());
  const bool keep_output = s.ok() && spec.is_map() && spec.reducers() > 0;
  if (s.ok()) {
    r.set_state(pb::TaskReport::SUCCEEDED);
  } else {
    r.set_state(task->cancel ? pb::TaskReport::KILLED : pb::TaskReport::FAILED);
    r.set_error(s.ToString());
  }
  LogEnd(*task, s);
  {
    std::error_code ec;
    fs::remove_all(task->dir + "/work", ec);  // the user code's directory (task_env.h)
  }
  if (metrics_) {
    metrics_->TaskEnded(spec.is_map(), s.ok() ? "succeeded" : (task->cancel ? "killed" : "failed"));
  }
  if (!keep_output) {
    std::error_code ec;
    fs::remove_all(task->dir, ec);
  }
  if (!s.ok() && !task->cancel) {
    spdlog::warn("task {} failed: {}", task->dir.substr(root_.size() + 1), s.ToString());
    // Perhaps a local write failed: if the disk cannot take a probe either,
    // the next heartbeat says so and the master places nothing here.
    disk_.WriteFailed(s.ToString());
  }
  {
    std::lock_guard lock(mu_);
    if (keep_output && !over_.count(spec.job_id())) {
      outputs_[{spec.job_id(), spec.index(), spec.attempt()}] = {task->output, r};
    }
    ended_.push_back(r);
    task->ended = true;
  }
  wake_();
}

void TaskTracker::Reap() {
  std::vector<std::unique_ptr<Task>> done;
  std::vector<int64_t> gone;
  {
    std::lock_guard lock(mu_);
    for (auto it = tasks_.begin(); it != tasks_.end();) {
      if ((*it)->ended) {
        done.push_back(std::move(*it));
        it = tasks_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = over_.begin(); it != over_.end();) {
      bool running = false;
      for (const auto& t : tasks_) running = running || t->spec.job_id() == *it;
      if (running) {
        ++it;
      } else {
        gone.push_back(*it);
        it = over_.erase(it);
      }
    }
  }
  for (auto& t : done) t->thread.join();
  for (int64_t job : gone) {
    remover_.Remove(root_ + "/job-" + std::to_string(job));
    job_files_.Forget(job);
  }
  SweepLogs(false);
}

void TaskTracker::Reset() {
  std::vector<std::unique_ptr<Task>> all;
  {
    std::lock_guard lock(mu_);
    for (auto& t : tasks_) t->cancel = true;
    all = std::move(tasks_);
    tasks_.clear();
  }
  for (auto& t : all) t->thread.join();
  remover_.Drain();  // nothing under root_ is being removed meanwhile
  std::lock_guard lock(mu_);
  ended_.clear();
  outputs_.clear();
  over_.clear();
  std::error_code ec;
  fs::remove_all(root_, ec);
}

std::vector<pb::TaskReport> TaskTracker::Reconnect() {
  std::vector<std::unique_ptr<Task>> all;
  {
    std::lock_guard lock(mu_);
    for (auto& t : tasks_) t->cancel = true;
    all = std::move(tasks_);
    tasks_.clear();
  }
  for (auto& t : all) t->thread.join();  // a map that finished meanwhile keeps its output
  std::vector<pb::TaskReport> held;
  std::lock_guard lock(mu_);
  ended_.clear();
  for (const auto& [key, out] : outputs_) held.push_back(out.report);
  if (!all.empty() || !held.empty()) {
    spdlog::info("master link lost: {} running attempt(s) stopped, {} map output(s) kept", all.size(),
                 held.size());
  }
  return held;
}

// ---------------------------------------------------------------- shuffle

void TaskTracker::RegisterHandlers(RpcServer& server) {
  server.Handle("shuffle.Fetch", [this](ServerCall& c) { return ServeFetch(c); });
  server.Handle("tasklog.Read", [this](ServerCall& c) { return ServeTaskLog(c); });
}

// Streams one partition's segment of a finished map's output.
awaitable<Status> TaskTracker::ServeFetch(ServerCall& call) {
  pb::FetchRequest req;
  if (!call.Parse(&req)) co_return Status::ProtocolError("malformed FetchRequest");
  std::string path;
  SegmentInfo segment;
  {
    std::lock_guard lock(mu_);
    auto it = outputs_.find({req.job_id(), req.map_index(), req.attempt()});
    if (it == outputs_.end()) {
      co_return Status::NotFound("no output of job " + std::to_string(req.job_id()) + " map " +
                                 std::to_string(req.map_index()) + " attempt " +
                                 std::to_string(req.attempt()) + " here");
    }
    const auto& segments = it->second.output.index.segments;
    if (req.partition() < 0 || static_cast<size_t>(req.partition()) >= segments.size()) {
      co_return Status::InvalidArgument("no partition " + std::to_string(req.partition()));
    }
    path = it->second.output.path;
    segment = segments[static_cast<size_t>(req.partition())];
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) co_return Status::IOError("cannot open map output '" + path + "'");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  pb::FetchReply header;
  header.set_bytes(segment.compressed_bytes);
  header.set_raw_bytes(segment.raw_bytes);
  header.set_records(segment.records);
  // A reducer in another datacenter asks for a higher level than stored.
  const int level = std::clamp(req.zstd_level(), 0, 19);
  int window_log = std::clamp(req.zstd_window_log(), 0, 27);
  // No window beyond the segment's bytes (an upper bound: each record's
  // two varints take at most 10 bytes), so a small segment costs the
  // reducer little memory.
  while (window_log > 10 && (int64_t{1} << (window_log - 1)) >= segment.raw_bytes + 10 * segment.records) {
    --window_log;
  }
  const bool recompress = level > 0 && segment.compressed_bytes > 0 &&
                          (level > MapOutputOptions{}.zstd_level || window_log > 0);
  if (recompress) {
    header.set_bytes(-1);
    header.set_zstd_level(level);
  }
  call.replied = true;
  MR_CO_RETURN_IF_ERROR(co_await call.conn.SendReply(header));
  std::string data;
  pb::FetchChunk chunk;
  if (recompress) {
    SegmentRecompressor recompressor(fd, segment.offset, segment.compressed_bytes, level,
                                     static_cast<size_t>(config_.dfs.transfer_chunk_bytes), window_log);
    bool done = false;
    do {
      Status s = recompressor.Next(&data, &done);
      if (!s.ok()) co_return co_await call.conn.SendError(s.WithContext(path));
      chunk.set_last(done);
      MR_CO_RETURN_IF_ERROR(co_await call.conn.SendReply(chunk, data));
    } while (!done);
    co_return Status::OK();
  }
  int64_t sent = 0;
  do {
    const int64_t n = std::min(config_.dfs.transfer_chunk_bytes, segment.compressed_bytes - sent);
    data.resize(static_cast<size_t>(n));
    const ssize_t got = ::pread(fd, data.data(), static_cast<size_t>(n), segment.offset + sent);
    if (got != n) co_return co_await call.conn.SendError(Status::IOError("short read of " + path));
    sent += n;
    chunk.set_last(sent >= segment.compressed_bytes);
    MR_CO_RETURN_IF_ERROR(co_await call.conn.SendReply(chunk, data));
  } while (sent < segment.compressed_bytes);
  co_return Status::OK();
}

}  // namespace mr::worker
