// SimHost: the event loop and the host's side of the scheduler contract
// (see host.h for the model). Each handler updates the ClusterState first,
// then calls the policy, exactly in the order TestHost
// (tests/scheduler/test_host.h) and the master use.
#include "sim/host.h"

#include <algorithm>
#include <cmath>

namespace mr::sim {

using sched::JobId;
using sched::NodeId;
using sched::TaskState;

SimHost::SimHost(const Scenario& scenario, const Workload& workload)
    : sc_(scenario), wl_(workload), rng_(StreamSeed(scenario.seed, "service")) {
  const ClusterSpec& c = scenario.cluster;
  const int racks_per_dc = c.racks / std::max(1, c.datacenters);
  for (int i = 0; i < c.nodes; ++i) {
    const int dc = static_cast<int>(static_cast<int64_t>(i) * c.datacenters / c.nodes);
    const int first = (dc * c.nodes + c.datacenters - 1) / c.datacenters;  // first node of dc
    const int in_dc = ((dc + 1) * c.nodes + c.datacenters - 1) / c.datacenters - first;
    const int rack = racks_per_dc > 0 ? dc * racks_per_dc + (i - first) * racks_per_dc / in_dc : -1;
    std::string name = "dc" + std::to_string(dc);
    if (rack >= 0) name += "-r" + std::to_string(rack);
    name += "-n" + std::to_string(i);
    state_.AddNode(name, dc, rack, c.map_slots, c.reduce_slots);
  }
  InitSpeeds();
}

SimHost::~SimHost() = default;

Result<RunResult> SimHost::Run(std::unique_ptr<sched::Scheduler> policy, bool timed) {
  policy_ = std::move(policy);
  if (!speculator_) speculator_ = std::move(sched::MakeSpeculator("none", {})).value();
  timed_ = timed;
  const auto wall_start = std::chrono::steady_clock::now();
  net_ = std::make_unique<Network>(sc_.network, state_);
  if (sc_.network.link_costs) state_.SetDistances(net_->UnitCosts());
  replicas_ = wl_.replicas;
  const size_t n = state_.nodes().size();
  hb_generation_.assign(n, 0);
  node_maps_.assign(n, {});
  node_reduces_.assign(n, {});
  type_tally_.assign(sc_.job_types.size(), Tally{});
  result_.node_maps.assign(n, 0);
  result_.tail_fraction = sc_.run.tail_fraction;
  result_.jobs_total = static_cast<int64_t>(wl_.jobs.size());

  for (const sched::Node& node : state_.nodes()) {
    CallPolicy([&] { policy_->OnNodeAdded(state_, node.id, 0); });
  }
  const int64_t hb = sc_.cluster.heartbeat_ms;
  for (size_t i = 0; i < n; ++i) {
    ScheduleHeartbeat(static_cast<NodeId>(i), static_cast<int64_t>(i) * hb / static_cast<int64_t>(n));
  }
  if (!wl_.jobs.empty()) events_.Push(wl_.jobs[0].submit_ms, EventKind::kJobArrival, 0);
  if (policy_->tick_ms() > 0) events_.Push(policy_->tick_ms(), EventKind::kTick);
  events_.Push(0, EventKind::kSample);
  for (size_t i = 0; i < sc_.run.failures.size(); ++i) {
    const NodeFailure& f = sc_.run.failures[i];
    events_.Push(f.at_ms, EventKind::kNodeDown, f.node, static_cast<int32_t>(i));
  }

  stopped_.clear();
  while (!events_.empty() && stopped_.empty()) {
    if (arrived_ == wl_.jobs.size() && unfinished_jobs_ == 0) {
      stopped_ = "done";
      break;
    }
    if (sc_.run.end_ms > 0 && events_.top().time > sc_.run.end_ms) {
      now_ = sc_.run.end_ms;
      stopped_ = "end_ms";
      break;
    }
    const Event e = events_.Pop();
    now_ = e.time;
    Handle(e);
    if (!error_.empty()) return Status::FailedPrecondition(error_);
  }
  Sample();

  result_.stopped = stopped_;
  result_.end_ms = now_;
  for (size_t t = 0; t < type_tally_.size(); ++t) {
    if (type_tally_[t].maps_total > 0 || type_tally_[t].jobs > 0) {
      result_.by_type[sc_.job_types[t].name] = type_tally_[t];
    }
  }
  if (timed_) {
    result_.timed = true;
    result_.wall_ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - wall_start).count();
    result_.policy_ms = std::chrono::duration<double, std::milli>(policy_time_).count();
  }
  return std::move(result_);
}

void SimHost::Handle(const Event& e) {
  switch (e.kind) {
    case EventKind::kMapEnd:
      return OnMapEnd(e.a, e.b, e.c);
    case EventKind::kReduceEnd:
      return OnReduceEnd(e.a, e.b, e.c);
    case EventKind::kPrefetchLanded:
      return OnPrefetchLanded(e.a);
    case EventKind::kNodeDown:
      return OnNodeDown(e.a, e.b);
    case EventKind::kNodeUp:
      return OnNodeUp(e.a);
    case EventKind::kJobArrival:
      return OnArrival(e.a);
    case EventKind::kTick:
      return OnTick();
    case EventKind::kHeartbeat:
      return OnHeartbeat(e.a, e.b);
    case EventKind::kSample:
      Sample();
      events_.Push(now_ + SampleMs(), EventKind::kSample);
      return;
  }
}

int64_t SimHost::SampleMs() const {
  return sc_.run.sample_ms > 0 ? sc_.run.sample_ms : 10 * sc_.cluster.heartbeat_ms;
}

// ---- Jobs ----

void SimHost::OnArrival(int32_t index) {
  const SimJob& sj = wl_.jobs[static_cast<size_t>(index)];
  const JobType& type = sc_.job_types[static_cast<size_t>(sj.type)];
  sched::Job job;
  job.name = type.name;
  job.code_hash = type.name;
  job.input_type = type.input_type;
  job.pool = "default";
  job.user = "user";
  job.submit_ms = now_;
  job.slowstart = sc_.workload.slowstart;
  const int64_t block_bytes = static_cast<int64_t>(sc_.data.block_mb * 1048576.0);
  job.input_bytes = block_bytes * static_cast<int64_t>(sj.blocks.size());
  const std::string key = type.name + "/" + type.input_type;
  if (sc_.workload.fp_known_at_start) {
    job.known_fp = type.fp;
  } else if (auto it = fp_history_.find(key); it != fp_history_.end()) {
    job.known_fp = it->second.first / it->second.second;
  }
  for (uint64_t block : sj.blocks) {
    sched::MapTask m;
    m.block = block;
    m.bytes = block_bytes;
    m.replicas = replicas_[block];
    job.maps.push_back(std::move(m));
  }
  job.reduces.resize(sj.reduce_ms.size());
  const JobId id = state_.AddJob(std::move(job));
  const sched::Job& j = state_.job(id);
  maps_.emplace_back(j.maps.size());
  reduces_.emplace_back(j.reduces.size());
  map_launches_.emplace_back(j.maps.size(), 0);
  map_successes_.emplace_back(j.maps.size(), 0);
  reduce_launches_.emplace_back(j.reduces.size(), 0);
  reduce_successes_.emplace_back(j.reduces.size(), 0);
  for (size_t m = 0; m < sj.blocks.size(); ++m) {
    block_maps_[sj.blocks[m]].emplace_back(id, static_cast<int32_t>(m));
  }
  result_.jobs.push_back(JobRecord{id, type.name, static_cast<int>(j.maps.size()),
                                   static_cast<int>(j.reduces.size()), now_, -1});
  result_.reduces_total += static_cast<int64_t>(j.reduces.size());
  ++arrived_;
  ++unfinished_jobs_;
  last_progress_ms_ = now_;
  CallPolicy([&] { policy_->OnJobAdded(state_, id, now_); });
  if (arrived_ < wl_.jobs.size()) {
    events_.Push(wl_.jobs[arrived_].submit_ms, EventKind::kJobArrival,
                 static_cast<int32_t>(arrived_));
  }
}

void SimHost::MaybeFinishJob(JobId id) {
  const sched::Job& job = state_.job(id);
  if (job.finished_maps != static_cast<int>(job.maps.size()) ||
      job.finished_reduces != static_cast<int>(job.reduces.size())) {
    return;
  }
  const SimJob& sj = wl_.jobs[static_cast<size_t>(id)];
  const JobType& type = sc_.job_types[static_cast<size_t>(sj.type)];
  state_.FinishJob(id);
  result_.jobs[static_cast<size_t>(id)].finish_ms = now_;
  const double fp_wire = type.fp_wire >= 0 ? type.fp_wire : type.fp;
  for (Tally* t : {&result_.all, &type_tally_[static_cast<size_t>(sj.type)]}) {
    ++t->jobs;
    t->jtt_ms_sum += static_cast<double>(now_ - job.submit_ms);
    t->fp_raw_sum += type.fp;
    t->fp_wire_sum += fp_wire;
  }
  auto& h = fp_history_[type.name + "/" + type.input_type];
  h.first += type.fp;
  h.second += 1;
  for (uint64_t block : sj.blocks) {
    auto it = block_maps_.find(block);
    if (it == block_maps_.end()) continue;
    std::erase_if(it->second, [id](const auto& p) { return p.first == id; });
    if (it->second.empty()) block_maps_.erase(it);
  }
  --unfinished_jobs_;
  CallPolicy([&] { policy_->OnJobFinished(state_, id, now_); });
}

// ---- Heartbeats and ticks ----

void SimHost::ScheduleHeartbeat(NodeId node, int64_t at) {
  events_.Push(at, EventKind::kHeartbeat, node, ++hb_generation_[static_cast<size_t>(node)]);
}

void SimHost::EndedOn(NodeId node) {
  last_progress_ms_ = now_;
  if (sc_.cluster.out_of_band_heartbeat && state_.node(node).live) ScheduleHeartbeat(node, now_);
}

// A frozen node (factor 0) sends nothing: no progress, no Assign. Its
// heartbeats keep their phase and resume when the episode ends.
void SimHost::OnHeartbeat(NodeId node, int32_t generation) {
  if (generation != hb_generation_[static_cast<size_t>(node)] || !state_.node(node).live) return;
  ScheduleHeartbeat(node, now_ + sc_.cluster.heartbeat_ms);
  if (speeds_.Frozen(node, static_cast<double>(now_))) return;
  ReportProgress(node);
  current_ = node;
  free_maps_ = state_.node(node).free_map_slots();
  free_reduces_ = state_.node(node).free_reduce_slots();
  ++result_.assign_calls;
  const sched::Heartbeat hb{node, now_};
  CallPolicy([&] { policy_->Assign(state_, hb, *this); });
  if (error_.empty()) {
    CallPolicy([&] { sched::SpeculateAt(state_, hb, *speculator_, *policy_, *this); });
  }
  current_ = sched::kNoNode;
}

void SimHost::OnTick() {
  in_tick_ = true;
  ++result_.tick_calls;
  CallPolicy([&] { policy_->OnTick(state_, now_, *this); });
  in_tick_ = false;
  events_.Push(now_ + policy_->tick_ms(), EventKind::kTick);
}

// ---- Backlog ----

void SimHost::Sample() {
  BacklogSample s;
  s.t_ms = now_;
  for (JobId id : state_.active_jobs()) {
    const sched::Job& j = state_.job(id);
    s.maps_waiting += j.pending_maps();
    s.maps_running += j.running_maps;
    s.reduces_waiting += j.pending_reduces();
    s.reduces_running += j.running_reduces;
  }
  s.active_jobs = static_cast<int64_t>(state_.active_jobs().size());
  if (!result_.backlog.empty() && result_.backlog.back().t_ms == now_) result_.backlog.pop_back();
  result_.backlog.push_back(s);
  if (!stopped_.empty()) return;  // the final sample of a stopped run
  if (sc_.run.max_backlog > 0 && s.maps_waiting + s.maps_running > sc_.run.max_backlog) {
    stopped_ = "max_backlog";
  }
  // Stalled: work waits, nothing runs or moves, and nothing happened for
  // 1000 heartbeat intervals (a policy that never serves some task).
  const bool idle = s.maps_running == 0 && s.reduces_running == 0 && in_flight_.empty();
  if (unfinished_jobs_ > 0 && idle && now_ - last_progress_ms_ > 1000 * sc_.cluster.heartbeat_ms) {
    stopped_ = "stalled";
  }
}

// ---- Node failures (RunSpec::failures), as TestHost::LoseNode ----

// Attempts there are lost: a task with a backup keeps its other attempt
// (DropAttempt, as the master's WorkerLost), the others are pending again;
// finished maps there of jobs with reduces run again.
void SimHost::OnNodeDown(NodeId node, int32_t failure) {
  if (!state_.node(node).live) return;
  state_.SetLive(node, false);
  node_maps_[static_cast<size_t>(node)].clear();
  node_reduces_[static_cast<size_t>(node)].clear();
  for (JobId id : std::vector<JobId>(state_.active_jobs())) {
    const sched::Job& job = state_.job(id);
    for (const sched::MapTask& m : job.maps) {
      if (m.state == TaskState::kRunning && (m.node == node || m.backup_node == node)) {
        const MapSim& s = maps_[static_cast<size_t>(id)][static_cast<size_t>(m.index)];
        AttemptEnded((m.node == node ? s.run : s.backup).launch_ms);
        ++result_.failed_attempts;
        if (m.backup_node != sched::kNoNode) {
          DropAttempt(id, m.index, /*is_map=*/true, node, /*failed=*/false);
        } else {
          state_.FailMap(id, m.index);
        }
      } else if (m.node == node && m.state == TaskState::kDone && !job.reduces.empty()) {
        CountMap(id, m.index, -1);  // its output is lost; its next success counts instead
        state_.RedoMap(id, m.index);
        ++result_.redone_maps;
      }
    }
    for (const sched::ReduceTask& r : job.reduces) {
      if (r.state != TaskState::kRunning || (r.node != node && r.backup_node != node)) continue;
      const ReduceSim& s = reduces_[static_cast<size_t>(id)][static_cast<size_t>(r.index)];
      AttemptEnded((r.node == node ? s.run : s.backup).launch_ms);
      ++result_.failed_attempts;
      if (r.backup_node != sched::kNoNode) {
        DropAttempt(id, r.index, /*is_map=*/false, node, /*failed=*/false);
      } else {
        state_.FailReduce(id, r.index);
      }
    }
  }
  CallPolicy([&] { policy_->OnNodeLost(state_, node, now_); });
  const int64_t back = sc_.run.failures[static_cast<size_t>(failure)].back_ms;
  if (back >= 0) events_.Push(std::max(back, now_), EventKind::kNodeUp, node);
}

void SimHost::OnNodeUp(NodeId node) {
  if (state_.node(node).live) return;
  state_.SetLive(node, true);
  CallPolicy([&] { policy_->OnNodeAdded(state_, node, now_); });
  ScheduleHeartbeat(node, now_);
}

}  // namespace mr::sim
