// The host's speculation step, the helpers speculators share, and the
// registry of speculators (speculator.h).
#include "scheduler/speculator.h"

#include <algorithm>

#include "scheduler/hadoop_speculator.h"
#include "scheduler/late_speculator.h"

namespace mr::sched {

bool AnyPending(const ClusterState& state, bool maps) {
  for (JobId id : state.active_jobs()) {
    const Job& j = state.job(id);
    if (maps ? j.pending_maps() > 0 : (j.pending_reduces() > 0 && j.reduces_may_start())) {
      return true;
    }
  }
  return false;
}

double ProgressRate(const Attempt& a, TaskState state, TimeMs now) {
  const TimeMs end = state == TaskState::kDone ? a.progress_ms : now;
  if (end <= a.start_ms) return 0.0;
  const double progress = state == TaskState::kDone ? 1.0 : a.progress;
  return progress * 1000.0 / static_cast<double>(end - a.start_ms);
}

int SpeculateAt(const ClusterState& state, const Heartbeat& hb, Speculator& speculator,
                Scheduler& policy, BackupLauncher& launcher) {
  int launched = 0;
  for (const bool maps : {true, false}) {
    auto free = [&] {
      const Node& n = state.node(hb.node);
      return maps ? n.free_map_slots() : n.free_reduce_slots();
    };
    if (free() <= 0 || state.node(hb.node).draining) continue;
    for (const BackupChoice& c : speculator.Choose(state, hb, maps)) {
      if (free() <= 0) break;
      if (c.is_map != maps || !policy.TakeBackup(state, hb, c)) continue;
      launcher.LaunchBackup(c);
      ++launched;
    }
  }
  return launched;
}

// ---------------------------------------------------------------- none

namespace {

class NoSpeculator : public Speculator {
 public:
  const char* name() const override { return "none"; }
  std::vector<BackupChoice> Choose(const ClusterState&, const Heartbeat&, bool) override {
    return {};
  }
};

const SpeculatorInfo& NoSpeculatorInfo() {
  static const SpeculatorInfo info{
      "none",
      "no speculative execution: every task has one attempt at a time",
      {},
      [](const SchedulerParams&) -> Result<std::unique_ptr<Speculator>> {
        return std::unique_ptr<Speculator>(new NoSpeculator());
      }};
  return info;
}

}  // namespace

// ---------------------------------------------------------------- registry

const std::vector<const SpeculatorInfo*>& RegisteredSpeculators() {
  static const std::vector<const SpeculatorInfo*> all = [] {
    std::vector<const SpeculatorInfo*> v = {&HadoopSpeculatorInfo(), &LateSpeculatorInfo(),
                                            &NoSpeculatorInfo()};
    std::sort(v.begin(), v.end(),
              [](const SpeculatorInfo* a, const SpeculatorInfo* b) { return a->name < b->name; });
    return v;
  }();
  return all;
}

Result<std::unique_ptr<Speculator>> MakeSpeculator(const std::string& name,
                                                   const SchedulerParams& params) {
  const SpeculatorInfo* info = nullptr;
  std::vector<std::string> names;
  for (const SpeculatorInfo* s : RegisteredSpeculators()) {
    names.push_back(s->name);
    if (s->name == name) info = s;
  }
  if (info == nullptr) {
    return Status::InvalidArgument("unknown speculator '" + name + "' (valid: " + JoinNames(names) +
                                   ")");
  }
  const std::string what = "speculator '" + name + "'";
  MR_ASSIGN_OR_RETURN(SchedulerParams complete, CompleteParams(what, info->params, params));
  auto made = info->make(complete);
  if (!made.ok()) return Status::InvalidArgument(what + ": " + made.status().message());
  return made;
}

}  // namespace mr::sched
