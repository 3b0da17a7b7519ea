// JobTracker, the deciding side of a heartbeat: the policy's launches and the
// speculator's backups become TaskSpecs in the reply; the host's tick; the
// prefetch orders; the measured link costs the probabilistic policy reads.
#include "master/job_tracker.h"

#include <chrono>
#include <set>
#include <tuple>

#include <spdlog/spdlog.h>

#include "master/job_tracker_internal.h"

namespace mr::master {


// The policy's launches become TaskSpecs in the heartbeat reply, and its
// prefetches copy orders to the worker holding the block.
class JobTracker::HeartbeatLauncher : public sched::Launcher, public sched::BackupLauncher {
 public:
  HeartbeatLauncher(JobTracker& tracker, sched::NodeId node, pb::HeartbeatReply* reply)
      : t_(tracker), node_(node), reply_(reply) {}

  void LaunchMap(sched::JobId sid, int32_t index) override {
    ActiveJob& job = *t_.Find(t_.job_ids_[static_cast<size_t>(sid)]);
    t_.state_.LaunchMap(sid, index, node_, t_.Now());
    const sched::MapTask& m = t_.state_.job(sid).maps[static_cast<size_t>(index)];
    job.maps[static_cast<size_t>(index)].locality = t_.state_.LocalityOf(node_, m.replicas);
    Launched(job, true, index, m.run.number);
  }

  void LaunchReduce(sched::JobId sid, int32_t index) override {
    ActiveJob& job = *t_.Find(t_.job_ids_[static_cast<size_t>(sid)]);
    t_.state_.LaunchReduce(sid, index, node_, t_.Now());
    Launched(job, false, index, t_.state_.job(sid).reduces[static_cast<size_t>(index)].run.number);
  }

  // A backup attempt of a running task (job_speculation.cc).
  void LaunchBackup(const sched::BackupChoice& c) override {
    ActiveJob& job = *t_.Find(t_.job_ids_[static_cast<size_t>(c.job)]);
    t_.state_.LaunchBackup(c.job, c.is_map, c.index, node_, t_.Now());
    const sched::Job& sj = t_.state_.job(c.job);
    int32_t attempt;
    if (c.is_map) {
      const sched::MapTask& m = sj.maps[static_cast<size_t>(c.index)];
      job.maps[static_cast<size_t>(c.index)].backup_locality = t_.state_.LocalityOf(node_, m.replicas);
      attempt = m.backup.number;
    } else {
      attempt = sj.reduces[static_cast<size_t>(c.index)].backup.number;
    }
    job.record.set_backups_launched(job.record.backups_launched() + 1);
    spdlog::info("job {} {} {}: backup attempt {} on {} ({})", job.record.id(),
                 c.is_map ? "map" : "reduce", c.index, attempt,
                 t_.node_names_[static_cast<size_t>(node_)], t_.speculator_->name());
    Launched(job, c.is_map, c.index, attempt);
  }

  void Prefetch(uint64_t block, sched::NodeId from, sched::NodeId to) override {
    t_.Prefetch(block, from, to);
  }

 private:
  void Launched(ActiveJob& job, bool is_map, int32_t index, int32_t attempt) {
    if (job.record.start_ms() == 0) job.record.set_start_ms(t_.clock_->WallMs());
    *reply_->add_launches() = t_.MakeSpec(job, is_map, index, attempt);
  }

  JobTracker& t_;
  sched::NodeId node_;
  pb::HeartbeatReply* reply_;
};

// ---------------------------------------------------------------- heartbeat

void JobTracker::Heartbeat(const pb::HeartbeatRequest& req, pb::HeartbeatReply* reply) {
  if (metrics_) metrics_->Heartbeat();
  const sched::NodeId node = NodeOf(req.worker_id());
  if (node == sched::kNoNode || !state_.node(node).live) return;
  UpdateDistances(node, req);
  const bool recovering = MaybeRecover();
  const bool listed_all = ListsAllAttempts(node, req);
  // The reports first, then the attempts the worker no longer runs.
  for (const pb::TaskReport& r : req.tasks()) ApplyReport(node, r);
  LoseUnlisted(node, req, listed_all);
  for (auto& ref : kills_[req.worker_id()]) *reply->add_kills() = std::move(ref);
  kills_.erase(req.worker_id());
  for (int64_t id : finished_[req.worker_id()]) reply->add_finished_jobs(id);
  finished_.erase(req.worker_id());
  if (recovering) return;  // nothing launches before the recovered jobs are back

  // A worker that cannot write gets no task: map output, fetched segments
  // and reduce output all go to its disk.
  if (!req.disk_problem().empty()) return;
  // Nor does a decommissioning one (its running tasks may finish).
  if (draining_.count(req.worker_id())) return;
  HeartbeatLauncher launcher(*this, node, reply);
  const auto decision_start = std::chrono::steady_clock::now();  // a measurement, not a rule
  scheduler_->Assign(state_, sched::Heartbeat{node, Now()}, launcher);
  if (metrics_) {
    metrics_->Decision(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - decision_start).count());
  }
  sched::SpeculateAt(state_, sched::Heartbeat{node, Now()}, *speculator_, *scheduler_, launcher);
}

// True when the beat lists every attempt the master runs on `node`: as many
// distinct current attempts as the node's slot counters (ClusterState keeps
// them, backups included) hold. O(reports), where the scan in
// LoseUnlisted is O(tasks of every active job): with 100,000 tasks and
// 500 workers that scan was 30 % of the master's CPU (issue 29,
// docs/benchmarks.md "Master at scale"). Called before the reports apply.
bool JobTracker::ListsAllAttempts(sched::NodeId node, const pb::HeartbeatRequest& req) const {
  std::set<std::tuple<int64_t, bool, int32_t, int32_t>> current;
  for (const pb::TaskReport& r : req.tasks()) {
    const ActiveJob* job = Find(r.job_id());
    if (job == nullptr || r.index() < 0) continue;
    const sched::Job& sj = state_.job(job->sid);
    if (static_cast<size_t>(r.index()) >= (r.is_map() ? sj.maps.size() : sj.reduces.size())) continue;
    if (AttemptOn(state_, job->sid, r.is_map(), r.index(), node) == r.attempt()) {
      current.emplace(r.job_id(), r.is_map(), r.index(), r.attempt());
    }
  }
  const sched::Node& n = state_.node(node);
  return current.size() == static_cast<size_t>(n.running_maps + n.running_reduces);
}

// Attempts the master believes run on `node` but the worker does not list
// were lost. (The worker starts the launches of a reply before its next
// beat, so every earlier launch is listed.) `listed_all`: ListsAllAttempts
// said none is missing.
void JobTracker::LoseUnlisted(sched::NodeId node, const pb::HeartbeatRequest& req, bool listed_all) {
  if (listed_all) return;
  std::set<std::tuple<int64_t, bool, int32_t, int32_t>> listed;
  for (const pb::TaskReport& r : req.tasks()) listed.emplace(r.job_id(), r.is_map(), r.index(), r.attempt());
  std::vector<std::tuple<int64_t, bool, int32_t, int32_t>> missing;
  for (auto& [id, job] : active_) {
    for (const RunningAttempt& a : RunningOn(state_, job->sid, node)) {
      if (!listed.count({id, a.is_map, a.index, a.attempt})) missing.emplace_back(id, a.is_map, a.index, a.attempt);
    }
  }
  for (const auto& [id, is_map, index, attempt] : missing) {
    ActiveJob* job = Find(id);
    // Still that attempt (an earlier failure in this loop may have ended the job or the task).
    if (job != nullptr && AttemptOn(state_, job->sid, is_map, index, node) == attempt) {
      TaskFailed(*job, is_map, index, node, "the worker does not run it", false);
    }
  }
}

// Datacenters no worker is in (no index) are left out.
void JobTracker::UpdateDistances(sched::NodeId node, const pb::HeartbeatRequest& req) {
  std::map<int32_t, double> rates;
  for (const pb::LinkRate& l : req.link_rates()) {
    if (auto it = dc_index_.find(l.datacenter()); it != dc_index_.end()) rates[it->second] = l.bytes_per_s();
  }
  if (link_costs_.Report(node, rates)) costs_changed_ = true;
  const bool wanted = std::string_view(scheduler_->name()) == "probabilistic";
  if (!wanted) {
    if (costs_set_) state_.SetDistances({});  // hop counts for every other policy
    costs_set_ = false;
    costs_nodes_ = 0;
    return;
  }
  if (!costs_changed_ && costs_nodes_ == state_.nodes().size()) return;
  costs_changed_ = false;
  costs_nodes_ = state_.nodes().size();
  std::vector<std::vector<double>> matrix = link_costs_.Build(state_);
  if (matrix.empty()) {
    if (costs_set_) state_.SetDistances({});
    costs_set_ = false;
    return;
  }
  costs_set_ = true;
  std::string pairs;
  for (const auto& [name_from, from] : dc_index_) {
    for (const auto& [name_to, to] : dc_index_) {
      const double rate = from == to ? 0 : link_costs_.Rate(state_, from, to);
      if (rate > 0) pairs += fmt::format(" {}->{} {:.1f} MiB/s;", name_from, name_to, rate / 1048576.0);
    }
  }
  state_.SetDistances(std::move(matrix));
  spdlog::info("probabilistic: link costs from measured read rates:{}", pairs);
}

void JobTracker::Tick() {
  if (scheduler_->tick_ms() <= 0) return;
  // The host's tick: launches need a heartbeating node, so a ticking policy
  // may only prefetch here (a Launch* call would be a policy bug).
  struct TickLauncher : sched::Launcher {
    JobTracker& t;
    explicit TickLauncher(JobTracker& tracker) : t(tracker) {}
    void LaunchMap(sched::JobId, int32_t) override { spdlog::error("policy launched a map on a tick"); }
    void LaunchReduce(sched::JobId, int32_t) override {
      spdlog::error("policy launched a reduce on a tick");
    }
    void Prefetch(uint64_t block, sched::NodeId from, sched::NodeId to) override {
      t.Prefetch(block, from, to);
    }
  } launcher(*this);
  scheduler_->OnTick(state_, Now(), launcher);
}

void JobTracker::Prefetch(uint64_t block, sched::NodeId from, sched::NodeId to) {
  const std::string& src = node_names_[static_cast<size_t>(from)];
  const std::string& dst = node_names_[static_cast<size_t>(to)];
  dfs_.copy(block, src, dst);
  // Counted against the job reading the block: its bytes, across
  // datacenters when the two nodes are in different ones.
  for (auto& [id, job] : active_) {
    for (const sched::MapTask& m : state_.job(job->sid).maps) {
      if (m.block != block) continue;
      job->record.set_prefetch_bytes(job->record.prefetch_bytes() + m.bytes);
      if (state_.node(from).datacenter != state_.node(to).datacenter) {
        job->record.set_prefetch_inter_dc_bytes(job->record.prefetch_inter_dc_bytes() + m.bytes);
      }
      return;
    }
  }
}

// The final report of an attempt of a job that has ended (a loser of a
// race killed with its job's end, or one outrun by a kill): its bytes join
}  // namespace mr::master
