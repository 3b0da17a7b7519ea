// The emulated workers of bench/master_scale (fleet.h says what is emulated).
#include "bench/master_scale/fleet.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "dfs/block_report.h"
#include "proto/dfs.pb.h"

namespace mr::bench {
namespace {

// Each emulated worker's disk: 64 TiB, so that the namespace run's full
// size (10,000,000 blocks of 128 MiB at replication 3, 3.75 PiB) fits on
// 100 workers. At 4 TiB a worker the 1,000,000-file run stopped at "no
// eligible node" (2026-11-29). No byte is stored: only the figure.
constexpr int64_t kCapacityBytes = int64_t{64} << 40;

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

awaitable<void> SleepUntil(asio::steady_timer& timer, Steady::time_point t) {
  timer.expires_at(t);
  co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

}  // namespace

class Fleet::Worker {
 public:
  Worker(Fleet& fleet, int index)
      : f_(fleet), index_(index), id_(fleet.WorkerId(index)), timer_(fleet.io_) {}

  awaitable<void> Run();
  void Stop() {
    stopped_ = true;
    LoseTasks();
    if (conn_) conn_->Close();
    timer_.cancel();
  }
  void Hold(uint64_t block, int64_t bytes) {
    pb::BlockRef ref;
    ref.set_id(block);
    ref.set_bytes(bytes);
    held_.push_back(ref);
    received_.push_back(std::move(ref));
  }
  bool registered() const { return registered_; }
  size_t running() const { return tasks_.size(); }
  const MemberView& view() const { return view_; }

 private:
  struct Task {
    pb::TaskSpec spec;
    Steady::time_point end;       // for a reduce, valid once !waiting
    int64_t start_wall_ms = 0;
    int64_t run_ms = 0;           // drawn
    bool waiting = false;         // a reduce waiting for its job's maps
  };

  awaitable<Status> Register();
  awaitable<Status> BeatLoop();
  // Maps and reduces whose time is up report success (a reduce writes its
  // output file first).
  awaitable<void> EndDueTasks(Steady::time_point now);
  awaitable<Status> WriteOutput(const pb::TaskSpec& spec, std::string* path);
  void Fill(pb::HeartbeatRequest* beat, Steady::time_point now) const;
  void Apply(const pb::HeartbeatReply& reply, Steady::time_point now);
  // Each waiting reduce asks where its job's map outputs are.
  awaitable<Status> PollReduces(Steady::time_point now);
  int64_t Draw(double mean_ms) {
    std::uniform_real_distribution<double> d(0.5 * mean_ms, 1.5 * mean_ms);
    return static_cast<int64_t>(d(f_.rng_));
  }
  void LoseTasks();

  Fleet& f_;
  int index_;
  std::string id_;
  asio::steady_timer timer_;
  std::unique_ptr<Connection> conn_;
  std::vector<pb::BlockRef> held_;      // every block placed here
  std::vector<pb::BlockRef> received_;  // since the last beat
  std::vector<Task> tasks_;
  std::vector<pb::TaskReport> ended_;
  uint64_t membership_version_ = 0;
  MemberView view_;  // kept only with check_views
  bool stopped_ = false;
  bool registered_ = false;
  bool register_warned_ = false;
};

awaitable<void> Fleet::Worker::Run() {
  while (!stopped_) {
    while (f_.connecting_ >= f_.options_.connect_parallelism) {
      co_await SleepUntil(timer_, Steady::now() + std::chrono::milliseconds(10));
    }
    if (stopped_) break;
    ++f_.connecting_;
    Status s = co_await Register();
    --f_.connecting_;
    if (s.ok()) {
      registered_ = true;
      s = co_await BeatLoop();
      registered_ = false;
      if (conn_) conn_->Close();
    } else {
      // Once per worker: a registration the master or the client refuses
      // (a block report past max_frame_bytes, say) is retried forever.
      if (!register_warned_) spdlog::warn("{}: cannot register: {}", id_, s.ToString());
      register_warned_ = true;
      ++f_.stats_.register_errors;
    }
    if (stopped_) break;
    if (!s.ok()) spdlog::debug("{}: {}", id_, s.ToString());
    co_await SleepUntil(timer_, Steady::now() + std::chrono::milliseconds(
                                                    f_.config_.cluster.heartbeat_interval_ms));
  }
}

awaitable<Status> Fleet::Worker::Register() {
  auto conn = co_await Connect(f_.config_.master.address, f_.rpc_);
  if (!conn.ok()) co_return conn.status();
  conn_ = std::move(conn).value();
  pb::RegisterRequest reg;
  pb::SharedSettings* shared = reg.mutable_settings();
  const ClusterConfig& c = f_.config_;
  shared->set_cluster_name(c.cluster.name);
  shared->set_block_size(c.dfs.block_size);
  shared->set_transfer_chunk_bytes(c.dfs.transfer_chunk_bytes);
  shared->set_max_frame_bytes(c.cluster.max_frame_bytes);
  shared->set_heartbeat_interval_ms(c.cluster.heartbeat_interval_ms);
  shared->set_rpc_timeout_ms(c.cluster.rpc_timeout_ms);
  pb::WorkerInfo* info = reg.mutable_worker();
  info->set_id(id_);
  // Never dialled: map outputs are not served and blocks not read.
  info->set_address("127.0.0.2:" + std::to_string(10000 + index_));
  info->set_datacenter("dc1");
  info->set_rack("r" + std::to_string(index_ / f_.options_.workers_per_rack + 1));
  info->set_map_slots(f_.options_.map_slots);
  info->set_reduce_slots(f_.options_.reduce_slots);
  info->set_capacity_bytes(kCapacityBytes);
  int64_t used = 0;
  for (const pb::BlockRef& b : held_) {
    *reg.add_blocks() = b;
    used += b.bytes();
  }
  reg.set_used_bytes(used);
  received_.clear();  // the full report has them
  LoseTasks();        // a worker registering again has stopped its attempts
  // As mr-worker does: the report in frame-sized parts, the rest after the
  // registration.
  const std::vector<pb::BlockReportRequest> parts =
      dfs::SplitBlockReport(&reg, dfs::BlockReportPartSize(c.cluster.max_frame_bytes));
  pb::RegisterReply reply;
  Status s = co_await conn_->Call("cluster.Register", reg, &reply);
  if (!s.ok()) co_return s;
  membership_version_ = reply.membership_version();
  f_.stats_.register_member_entries += reply.members_size();
  if (f_.options_.check_views) {
    view_.Apply(reply.members(), reply.dead_members(), reply.membership_version(), false);
  }
  for (const pb::BlockReportRequest& part : parts) {
    pb::BlockReportReply answered;
    if (s = co_await conn_->Call("cluster.BlockReport", part, &answered); !s.ok()) co_return s;
  }
  co_return Status::OK();
}

void Fleet::Worker::LoseTasks() {
  f_.NoteLoss(index_);
  tasks_.clear();
  ended_.clear();
}

awaitable<Status> Fleet::Worker::BeatLoop() {
  const int interval_ms = f_.config_.cluster.heartbeat_interval_ms;
  // Workers started together still beat at different moments.
  std::uniform_int_distribution<int> phase(0, interval_ms);
  Steady::time_point next = Steady::now() + std::chrono::milliseconds(phase(f_.rng_));
  while (!stopped_) {
    Steady::time_point wake = next;
    for (const Task& t : tasks_) {
      if (!t.waiting) wake = std::min(wake, t.end);  // a task's end wakes the worker
    }
    co_await SleepUntil(timer_, wake);
    if (stopped_) break;
    co_await EndDueTasks(Steady::now());
    if (stopped_) break;
    pb::HeartbeatRequest beat;
    Fill(&beat, Steady::now());
    pb::HeartbeatReply reply;
    const Steady::time_point sent = Steady::now();
    Status s = co_await conn_->Call("cluster.Heartbeat", beat, &reply);
    const Steady::time_point got = Steady::now();
    if (stopped_) break;
    if (!s.ok()) {
      ++f_.stats_.beat_errors;
      co_return s;
    }
    if (f_.window_) {
      f_.stats_.beat_ms.push_back(std::chrono::duration<double, std::milli>(got - sent).count());
      ++f_.stats_.beats;
    }
    if (reply.reregister()) {
      ++f_.stats_.reregisters;
      co_return Status::Unavailable("the master asked to register again");
    }
    Apply(reply, got);
    s = co_await PollReduces(Steady::now());
    if (!s.ok()) {
      ++f_.stats_.beat_errors;
      co_return s;
    }
    next = got + std::chrono::milliseconds(interval_ms);
  }
  co_return Status::OK();
}

void Fleet::Worker::Fill(pb::HeartbeatRequest* beat, Steady::time_point now) const {
  beat->set_worker_id(id_);
  beat->set_membership_version(membership_version_);
  beat->set_member_deltas(true);
  int maps = 0, reduces = 0;
  int64_t used = 0;
  for (const pb::BlockRef& b : held_) used += b.bytes();
  for (const Task& t : tasks_) {
    (t.spec.is_map() ? maps : reduces)++;
    pb::TaskReport* r = beat->add_tasks();
    r->set_job_id(t.spec.job_id());
    r->set_is_map(t.spec.is_map());
    r->set_index(t.spec.index());
    r->set_attempt(t.spec.attempt());
    r->set_state(pb::TaskReport::RUNNING);
    if (t.waiting) {
      r->set_progress(0.1f);
      continue;
    }
    const double left = std::chrono::duration<double, std::milli>(t.end - now).count();
    const float done = std::clamp(1.0f - static_cast<float>(left / std::max<int64_t>(1, t.run_ms)), 0.0f, 1.0f);
    if (t.spec.is_map()) {
      r->set_bytes_read(static_cast<int64_t>(done * static_cast<float>(t.spec.split_length())));
      r->set_progress(done);
    } else {
      r->set_progress(0.3f + 0.7f * done);
    }
  }
  for (const pb::TaskReport& r : ended_) *beat->add_tasks() = r;
  for (const pb::BlockRef& b : received_) *beat->add_received() = b;
  beat->set_used_bytes(used);
  beat->set_free_bytes(kCapacityBytes - used);
  beat->set_free_map_slots(std::max(0, f_.options_.map_slots - maps));
  beat->set_free_reduce_slots(std::max(0, f_.options_.reduce_slots - reduces));
}

void Fleet::Worker::Apply(const pb::HeartbeatReply& reply, Steady::time_point now) {
  ended_.clear();
  received_.clear();
  if (reply.members_size() > 0 || reply.membership_version() != 0) {
    membership_version_ = reply.membership_version();
    ++f_.stats_.member_lists;
    f_.stats_.member_deltas += reply.members_delta() ? 1 : 0;
    f_.stats_.member_entries += reply.members_size();
    if (f_.options_.check_views) {
      view_.Apply(reply.members(), reply.dead_members(), reply.membership_version(),
                  reply.members_delta());
    }
  }
  for (const pb::TaskRef& k : reply.kills()) {
    std::erase_if(tasks_, [&](const Task& t) {
      return t.spec.job_id() == k.job_id() && t.spec.is_map() == k.is_map() &&
             t.spec.index() == k.index() && t.spec.attempt() == k.attempt();
    });
  }
  for (const pb::TaskSpec& spec : reply.launches()) {
    f_.NoteLaunch(spec, index_);
    Task t;
    t.spec = spec;
    t.start_wall_ms = WallMs();
    t.run_ms = Draw(spec.is_map() ? f_.options_.map_ms : f_.options_.reduce_ms);
    t.waiting = !spec.is_map();
    t.end = now + std::chrono::milliseconds(t.run_ms);
    tasks_.push_back(std::move(t));
  }
}

awaitable<Status> Fleet::Worker::PollReduces(Steady::time_point now) {
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (!tasks_[i].waiting) continue;
    pb::MapOutputsRequest ask;
    ask.set_job_id(tasks_[i].spec.job_id());
    ask.set_reduce_index(tasks_[i].spec.index());
    pb::MapOutputsReply where;
    MR_CO_RETURN_IF_ERROR(co_await conn_->Call("job.MapOutputs", ask, &where));
    if (stopped_ || i >= tasks_.size()) co_return Status::OK();
    Task& t = tasks_[i];
    if (where.job_over()) {
      t.waiting = false;
      t.end = now;  // reported killed at once
      t.spec.set_maps(-1);
    } else if (where.outputs_size() >= where.maps()) {
      t.waiting = false;
      t.end = now + std::chrono::milliseconds(t.run_ms);
    }
  }
  co_return Status::OK();
}

awaitable<void> Fleet::Worker::EndDueTasks(Steady::time_point now) {
  for (size_t i = 0; i < tasks_.size();) {
    if (tasks_[i].waiting || tasks_[i].end > now) {
      ++i;
      continue;
    }
    Task t = std::move(tasks_[i]);
    tasks_.erase(tasks_.begin() + static_cast<std::ptrdiff_t>(i));
    pb::TaskReport r;
    r.set_job_id(t.spec.job_id());
    r.set_is_map(t.spec.is_map());
    r.set_index(t.spec.index());
    r.set_attempt(t.spec.attempt());
    r.set_run_ms(t.run_ms);
    r.set_start_wall_ms(t.start_wall_ms);
    r.set_end_wall_ms(WallMs());
    r.set_progress(1.0f);
    if (t.spec.maps() < 0) {
      r.set_state(pb::TaskReport::KILLED);
    } else if (t.spec.is_map()) {
      const int64_t in = t.spec.split_length();
      r.set_state(pb::TaskReport::SUCCEEDED);
      r.set_bytes_read(in);
      r.mutable_input()->set_local(in);
      r.set_records_in(in / 100);
      r.set_records_out(in / 20);
      r.set_raw_output_bytes(in);
      const int parts = std::max(1, t.spec.reducers());
      for (int p = 0; p < t.spec.reducers(); ++p) {
        r.add_partition_raw_bytes(in / parts);
        r.add_partition_bytes(in / 3 / parts);
      }
      ++f_.stats_.maps_done;
    } else {
      std::string path;
      Status s = co_await WriteOutput(t.spec, &path);
      if (stopped_) co_return;
      if (!s.ok()) {
        ++f_.stats_.output_errors;
        r.set_state(pb::TaskReport::FAILED);
        r.set_error(s.ToString());
      } else {
        r.set_state(pb::TaskReport::SUCCEEDED);
        r.set_output_file(path);
        ++f_.stats_.reduces_done;
      }
    }
    ended_.push_back(std::move(r));
  }
}

// An empty output file, under the attempt's name (worker/task_bodies.cc
// AttemptFile): the master commits it by renaming.
awaitable<Status> Fleet::Worker::WriteOutput(const pb::TaskSpec& spec, std::string* path) {
  *path = spec.output_dir() + "/r-" + std::to_string(spec.index()) + "-a" + std::to_string(spec.attempt());
  pb::CreateFileRequest create;
  create.set_path(*path);
  create.set_replication(spec.output_replication());
  create.set_writer_node(id_);
  create.set_overwrite(true);
  create.set_client_id(id_ + "/r" + std::to_string(spec.index()));
  pb::CreateFileReply lease;
  MR_CO_RETURN_IF_ERROR(co_await conn_->Call("dfs.Create", create, &lease));
  pb::CompleteFileRequest complete;
  complete.set_lease_id(lease.lease_id());
  complete.set_path(*path);
  complete.set_client_id(create.client_id());
  pb::Empty empty;
  co_return co_await conn_->Call("dfs.CompleteFile", complete, &empty);
}

// ---------------------------------------------------------------- Fleet

Fleet::Fleet(asio::io_context& io, const ClusterConfig& config, FleetOptions options)
    : io_(io),
      config_(config),
      rpc_(RpcOptions::FromConfig(config, "worker")),
      options_(options),
      rng_(options.seed) {
  for (int i = 0; i < options_.workers; ++i) workers_.push_back(std::make_unique<Worker>(*this, i));
  losses_.assign(static_cast<size_t>(options_.workers), 0);
}

Fleet::~Fleet() = default;

void Fleet::Start() {
  for (auto& w : workers_) asio::co_spawn(io_, w->Run(), asio::detached);
  lag_ = std::make_unique<LoopLagProbe>(io_.get_executor(), std::chrono::milliseconds(50), [this](double s) {
    if (window_) stats_.lag_ms.push_back(s * 1000);
  });
  lag_->Start();
}

int Fleet::Registered() const {
  int n = 0;
  for (const auto& w : workers_) n += w->registered() ? 1 : 0;
  return n;
}

void Fleet::AddBlock(const std::string& id, uint64_t block, int64_t bytes) {
  const int index = std::stoi(id.substr(1)) - 1;
  if (index >= 0 && static_cast<size_t>(index) < workers_.size()) {
    workers_[static_cast<size_t>(index)]->Hold(block, bytes);
  }
}

void Fleet::StopWorker(int index) {
  workers_[static_cast<size_t>(index)]->Stop();
  stopped_ids_.push_back(WorkerId(index));
}

void Fleet::StopAll() {
  if (lag_) lag_->Stop();
  for (auto& w : workers_) w->Stop();
}

void Fleet::OpenWindow() {
  window_ = true;
  stats_.beat_ms.clear();
  stats_.lag_ms.clear();
  stats_.beats = 0;
  stats_.launches = 0;
}

void Fleet::CloseWindow() { window_ = false; }

int64_t Fleet::Running() const {
  int64_t n = 0;
  for (const auto& w : workers_) n += static_cast<int64_t>(w->running());
  return n;
}

int Fleet::ViewsDiffering(const std::map<std::string, bool>& dead_by_id) const {
  int differing = 0;
  for (const auto& w : workers_) {
    if (!w->registered()) continue;
    const auto& view = w->view().members();
    bool same = view.size() == dead_by_id.size();
    for (auto it = view.begin(); same && it != view.end(); ++it) {
      auto master = dead_by_id.find(it->first);
      same = master != dead_by_id.end() && master->second == it->second.dead;
    }
    differing += same ? 0 : 1;
  }
  return differing;
}

void Fleet::NoteLaunch(const pb::TaskSpec& spec, int worker) {
  ++stats_.launches_total;
  if (window_) ++stats_.launches;
  const TaskKey key{spec.job_id(), spec.is_map(), spec.index()};
  const LaunchedOn now{worker, losses_[static_cast<size_t>(worker)]};
  auto [it, fresh] = last_launch_.try_emplace(key, now);
  if (fresh) return;
  const LaunchedOn before = it->second;
  it->second = now;
  if (losses_[static_cast<size_t>(before.worker)] > before.losses) {
    ++stats_.relaunches_after_loss;
  } else {
    unexplained_.emplace_back(key, before);
  }
}

const FleetStats& Fleet::stats() {
  std::vector<std::pair<TaskKey, LaunchedOn>> still;
  for (const auto& [key, before] : unexplained_) {
    if (losses_[static_cast<size_t>(before.worker)] > before.losses) {
      ++stats_.relaunches_after_loss;
      continue;
    }
    still.emplace_back(key, before);
  }
  unexplained_.clear();
  stats_.duplicate_launches += static_cast<int64_t>(still.size());
  for (const auto& [key, before] : still) {
    spdlog::warn("job {} {} {} launched again though worker {} lost nothing", std::get<0>(key),
                 std::get<1>(key) ? "map" : "reduce", std::get<2>(key), WorkerId(before.worker));
  }
  return stats_;
}

}  // namespace mr::bench
