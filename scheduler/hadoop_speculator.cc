#include "scheduler/hadoop_speculator.h"

#include <algorithm>
#include <tuple>

namespace mr::sched {
namespace {

// Mean progress score over a job's tasks of one kind (Hadoop's
// mapProgress() / maps): done 1, running its attempt's score, pending 0.
template <typename Task>
double AverageProgress(const std::vector<Task>& tasks) {
  if (tasks.empty()) return 0.0;
  double sum = 0;
  for (const Task& t : tasks) {
    if (t.state == TaskState::kDone) {
      sum += 1.0;
    } else if (t.state == TaskState::kRunning) {
      sum += std::max(t.run.progress, t.backup_node == kNoNode ? 0.0 : t.backup.progress);
    }
  }
  return sum / static_cast<double>(tasks.size());
}

}  // namespace

std::vector<BackupChoice> HadoopSpeculator::Choose(const ClusterState& state, const Heartbeat& hb,
                                                   bool maps) {
  if (AnyPending(state, maps)) return {};
  // (job position, locality rank, index) → choice; sorted at the end.
  std::vector<std::tuple<size_t, int, int32_t, BackupChoice>> found;
  const auto& active = state.active_jobs();
  for (size_t pos = 0; pos < active.size(); ++pos) {
    const Job& j = state.job(active[pos]);
    auto consider = [&](const auto& t, int rank) {
      if (!MayBackUp(t, hb.node) || hb.now - t.run.start_ms < lag_ms_) return;
      found.emplace_back(pos, rank, t.index, BackupChoice{j.id, maps, t.index});
    };
    if (maps) {
      const double avg = AverageProgress(j.maps);
      for (const MapTask& m : j.maps) {
        if (avg - m.run.progress < gap_) continue;
        consider(m, static_cast<int>(state.LocalityOf(hb.node, m.replicas)));
      }
    } else {
      const double avg = AverageProgress(j.reduces);
      for (const ReduceTask& r : j.reduces) {
        if (avg - r.run.progress >= gap_) consider(r, 0);
      }
    }
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) <
           std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
  });
  std::vector<BackupChoice> out;
  for (const auto& f : found) out.push_back(std::get<3>(f));
  return out;
}

const SpeculatorInfo& HadoopSpeculatorInfo() {
  static const SpeculatorInfo info{
      "hadoop",
      "Hadoop 1 TaskInProgress.hasSpeculativeTask: progress 0.2 below the job's average after 60 s",
      {{"gap", 0.2, "back up a task whose progress is at least this far below its job's average"},
       {"lag_ms", int64_t{60000}, "only tasks that have run at least this long (ms)"}},
      [](const SchedulerParams& p) -> Result<std::unique_ptr<Speculator>> {
        const double gap = ParamDouble(p, "gap");
        const int64_t lag = ParamInt(p, "lag_ms");
        if (!(gap >= 0 && gap <= 1)) return Status::InvalidArgument("gap must be in [0, 1]");
        if (lag < 0) return Status::InvalidArgument("lag_ms must be >= 0");
        return std::unique_ptr<Speculator>(new HadoopSpeculator(gap, lag));
      }};
  return info;
}

}  // namespace mr::sched
