#include "scheduler/late_speculator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace mr::sched {
namespace {

constexpr double kInfinite = std::numeric_limits<double>::infinity();

struct Candidate {
  double time_left_s = 0;
  JobId job = 0;
  int32_t index = 0;
};

// Steps 3–5 for one job's tasks of one kind. A fresh attempt's time (step
// 5) is the mean run time of the done tasks counted from `since`: for
// reduces, when the job's last map ended (a reduce that started early spent
// its first part waiting for maps, which a backup started now will not).
template <typename Task>
void JobCandidates(const LateOptions& o, const Job& j, const std::vector<Task>& tasks, NodeId node,
                   TimeMs now, TimeMs since, std::vector<Candidate>* out) {
  std::vector<double> rates;
  double done_ms = 0;
  int done = 0;
  for (const Task& t : tasks) {
    if (t.state == TaskState::kPending) continue;
    rates.push_back(ProgressRate(t.run, t.state, now));
    if (t.state == TaskState::kDone) {
      done_ms += static_cast<double>(t.run.progress_ms - std::max(t.run.start_ms, since));
      ++done;
    }
  }
  const double slow_rate = Percentile(rates, o.slow_task_percentile);
  const double mean_done_s = done > 0 ? done_ms / done / 1000.0 : 0.0;
  for (const Task& t : tasks) {
    if (!MayBackUp(t, node) || now - t.run.start_ms < o.min_run_ms) continue;
    const double rate = ProgressRate(t.run, t.state, now);
    if (!(rate < slow_rate)) continue;
    const double left = rate > 0 ? (1.0 - t.run.progress) / rate : kInfinite;
    if (o.require_gain && (done == 0 || !(left > mean_done_s))) continue;
    out->push_back({left, j.id, t.index});
  }
}

}  // namespace

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

std::vector<double> NodeProgress(const ClusterState& state) {
  std::vector<double> total(state.nodes().size(), 0.0);
  auto add = [&](const auto& t) {
    if (t.state == TaskState::kDone && t.node != kNoNode) {
      total[static_cast<size_t>(t.node)] += 1.0;
    } else if (t.state == TaskState::kRunning) {
      total[static_cast<size_t>(t.node)] += t.run.progress;
      if (t.backup_node != kNoNode) total[static_cast<size_t>(t.backup_node)] += t.backup.progress;
    }
  };
  for (JobId id : state.active_jobs()) {
    const Job& j = state.job(id);
    for (const MapTask& m : j.maps) add(m);
    for (const ReduceTask& r : j.reduces) add(r);
  }
  for (const Node& n : state.nodes()) {
    if (!n.live) total[static_cast<size_t>(n.id)] = 0.0;
  }
  return total;
}

std::vector<BackupChoice> LateSpeculator::Choose(const ClusterState& state, const Heartbeat& hb,
                                                 bool maps) {
  if (AnyPending(state, maps)) return {};
  const int slots = maps ? state.total_map_slots() : state.total_reduce_slots();
  const int cap = std::max(1, static_cast<int>(std::floor(o_.cap * slots)));
  const int room = cap - state.running_backups(maps);
  if (room <= 0) return {};

  const std::vector<double> progress = NodeProgress(state);
  std::vector<double> live;
  for (const Node& n : state.nodes()) {
    if (n.live && !n.draining) live.push_back(progress[static_cast<size_t>(n.id)]);
  }
  if (progress[static_cast<size_t>(hb.node)] < Percentile(live, o_.slow_node_percentile)) return {};

  std::vector<Candidate> found;
  for (JobId id : state.active_jobs()) {
    const Job& j = state.job(id);
    if (maps) {
      JobCandidates(o_, j, j.maps, hb.node, hb.now, 0, &found);
    } else if (j.finished_maps == static_cast<int>(j.maps.size())) {
      TimeMs maps_end = 0;
      for (const MapTask& m : j.maps) maps_end = std::max(maps_end, m.run.progress_ms);
      JobCandidates(o_, j, j.reduces, hb.node, hb.now, maps_end, &found);
    }
  }
  std::sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(b.time_left_s, a.job, a.index) < std::tie(a.time_left_s, b.job, b.index);
  });
  std::vector<BackupChoice> out;
  for (const Candidate& c : found) {
    if (static_cast<int>(out.size()) == room) break;
    out.push_back({c.job, maps, c.index});
  }
  return out;
}

const SpeculatorInfo& LateSpeculatorInfo() {
  static const SpeculatorInfo info{
      "late",
      "LATE (Zaharia et al., OSDI 2008, §4.2): longest estimated time left, fast nodes, capped",
      {{"cap", 0.1, "SpeculativeCap: at most this fraction of the live slots of a kind run backups"},
       {"slow_node_percentile", 25.0,
        "SlowNodeThreshold: no backup on a node whose total progress is below this percentile"},
       {"slow_task_percentile", 25.0,
        "SlowTaskThreshold: only tasks whose progress rate is below this percentile of their job's"},
       {"min_run_ms", int64_t{2000}, "only tasks that have run at least this long (ms)"},
       {"require_gain", true,
        "only tasks whose time left exceeds their job's mean task run time (false: the paper's rule)"}},
      [](const SchedulerParams& p) -> Result<std::unique_ptr<Speculator>> {
        LateOptions o;
        o.cap = ParamDouble(p, "cap");
        o.slow_node_percentile = ParamDouble(p, "slow_node_percentile");
        o.slow_task_percentile = ParamDouble(p, "slow_task_percentile");
        o.min_run_ms = ParamInt(p, "min_run_ms");
        o.require_gain = ParamBool(p, "require_gain");
        if (!(o.cap > 0 && o.cap <= 1)) return Status::InvalidArgument("cap must be in (0, 1]");
        for (double q : {o.slow_node_percentile, o.slow_task_percentile}) {
          if (!(q >= 0 && q <= 100)) {
            return Status::InvalidArgument("percentiles must be in [0, 100]");
          }
        }
        if (o.min_run_ms < 0) return Status::InvalidArgument("min_run_ms must be >= 0");
        return std::unique_ptr<Speculator>(new LateSpeculator(o));
      }};
  return info;
}

}  // namespace mr::sched
