// Switching the hosted policy between workloads without restarting the
// master or touching the DFS: `mrctl scheduler set NAME [--param k=v]` and
// `mrctl scheduler show` (docs/schedulers.md, "Switching policies").
//
// A switch is allowed only when the JobTracker holds no job at all (none
// running, waiting, or waiting to be recovered after a restart), so the new
// policy starts from an empty ClusterState of jobs and needs only
// OnNodeAdded for every live worker. The choice is kept in the job history
// with the cluster file's [scheduler] of the moment: a restarted master
// keeps the last `set` unless the file's [scheduler] has changed since
// (then the file wins, as the newer decision).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "master/job_tracker_internal.h"
#include "scheduler/spec_text.h"

namespace mr::master {
namespace {

const sched::PolicyInfo* FindPolicy(const std::string& name) {
  for (const sched::PolicyInfo* p : sched::RegisteredPolicies()) {
    if (p->name == name) return p;
  }
  return nullptr;
}

// A parameter value as text: a string as itself, others as the cluster
// file writes them.
std::string ParamText(const sched::ParamValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return sched::ParamToString(v);
}

// `text` as a value of the type `declared` has; InvalidArgument naming the
// parameter otherwise.
Result<sched::ParamValue> ParseParam(const std::string& policy, const std::string& name,
                                     const sched::ParamValue& declared, const std::string& text) {
  const std::string bad = "scheduler '" + policy + "': parameter '" + name + "' must be " +
                          sched::ParamTypeName(declared) + ", got '" + text + "'";
  if (std::holds_alternative<bool>(declared)) {
    if (text == "true") return sched::ParamValue(true);
    if (text == "false") return sched::ParamValue(false);
    return Status::InvalidArgument(bad);
  }
  if (std::holds_alternative<int64_t>(declared)) {
    int64_t v = 0;
    if (!sched::ParseNumber(text, &v)) return Status::InvalidArgument(bad);
    return sched::ParamValue(v);
  }
  if (std::holds_alternative<double>(declared)) {
    double v = 0;
    if (!sched::ParseNumber(text, &v)) return Status::InvalidArgument(bad);
    return sched::ParamValue(v);
  }
  return sched::ParamValue(text);
}

// Text parameters typed by the policy's declaration. An unknown policy or
// parameter is InvalidArgument listing the valid ones.
Result<sched::SchedulerParams> TypedParams(const std::string& policy,
                                           const std::map<std::string, std::string>& text) {
  const sched::PolicyInfo* info = FindPolicy(policy);
  if (info == nullptr) {
    std::string names;
    for (const sched::PolicyInfo* p : sched::RegisteredPolicies()) {
      names += (names.empty() ? "" : ", ") + p->name;
    }
    return Status::InvalidArgument("unknown scheduler '" + policy + "' (schedulers: " + names +
                                   ")");
  }
  sched::SchedulerParams typed;
  for (const auto& entry : text) {
    const std::string& name = entry.first;  // named: clang 14 cannot capture a binding
    const std::string& value = entry.second;
    auto spec = std::find_if(info->params.begin(), info->params.end(),
                             [&](const sched::SchedulerParamSpec& p) { return p.name == name; });
    if (spec == info->params.end()) {
      std::string names;
      for (const auto& p : info->params) names += (names.empty() ? "" : ", ") + p.name;
      return Status::InvalidArgument("scheduler '" + policy + "': unknown parameter '" + name +
                                     "' (parameters: " + (names.empty() ? "none" : names) + ")");
    }
    MR_ASSIGN_OR_RETURN(typed[name], ParseParam(policy, name, spec->default_value, value));
  }
  return typed;
}

// Every declared parameter of `policy` as text: the given value or the
// default.
std::map<std::string, std::string> CompleteText(const std::string& policy,
                                                const sched::SchedulerParams& given) {
  std::map<std::string, std::string> out;
  const sched::PolicyInfo* info = FindPolicy(policy);
  if (info == nullptr) return out;
  for (const sched::SchedulerParamSpec& p : info->params) {
    auto it = given.find(p.name);
    out[p.name] = ParamText(it == given.end() ? p.default_value : it->second);
  }
  return out;
}

sched::SchedulerParams FileParams(const ClusterConfig& config) {
  sched::SchedulerParams params;
  for (const auto& [key, value] : config.scheduler.params) {
    params[key] = std::visit([](const auto& v) { return sched::ParamValue(v); }, value);
  }
  return params;
}

}  // namespace

Status JobTracker::RestoreScheduler() {
  const sched::SchedulerParams file_params = FileParams(config_);
  scheduler_params_ = CompleteText(config_.scheduler.name, file_params);
  scheduler_source_ = "file";
  const std::optional<pb::SchedulerChoice> saved = history_->Scheduler();
  if (!saved) return Status::OK();
  const std::map<std::string, std::string> saved_file(saved->file_params().begin(),
                                                      saved->file_params().end());
  if (saved->file_name() != config_.scheduler.name || saved_file != scheduler_params_) {
    spdlog::info(
        "the cluster file's [scheduler] changed since `mrctl scheduler set {}`: "
        "hosting the file's '{}'",
        saved->name(), config_.scheduler.name);
    return Status::OK();
  }
  const std::map<std::string, std::string> text(saved->params().begin(), saved->params().end());
  auto typed = TypedParams(saved->name(), text);
  if (!typed.ok()) {
    spdlog::warn("cannot host the last `scheduler set` ({}); hosting the file's '{}'",
                 typed.status().ToString(), config_.scheduler.name);
    return Status::OK();
  }
  sched::SchedulerEnv env;
  env.heartbeat_ms = config_.cluster.heartbeat_interval_ms;
  env.seed = static_cast<uint64_t>(config_.scheduler.seed);
  auto made = sched::MakeScheduler(saved->name(), *typed, env);
  if (!made.ok()) {
    spdlog::warn("cannot host the last `scheduler set` ({}); hosting the file's '{}'",
                 made.status().ToString(), config_.scheduler.name);
    return Status::OK();
  }
  scheduler_ = std::move(made).value();
  scheduler_params_ = CompleteText(saved->name(), *typed);
  scheduler_source_ = "set";
  spdlog::info(
      "hosting scheduler '{}' from the last `mrctl scheduler set` (the cluster file "
      "names '{}')",
      scheduler_->name(), config_.scheduler.name);
  return Status::OK();
}

Status JobTracker::SetScheduler(const pb::SchedulerChoice& req, pb::SchedulerChoice* reply) {
  const std::map<std::string, std::string> text(req.params().begin(), req.params().end());
  MR_ASSIGN_OR_RETURN(sched::SchedulerParams typed, TypedParams(req.name(), text));
  sched::SchedulerEnv env;
  env.heartbeat_ms = config_.cluster.heartbeat_interval_ms;
  env.seed = static_cast<uint64_t>(config_.scheduler.seed);
  MR_ASSIGN_OR_RETURN(auto made, sched::MakeScheduler(req.name(), typed, env));
  if (!active_.empty() || !recovering_.empty()) {
    const size_t n = active_.size() + recovering_.size();
    return Status::FailedPrecondition("cannot switch the scheduler while " + std::to_string(n) +
                                      " job(s) run or wait (" + scheduler_->name() +
                                      " hosts them); switch when none does (mrctl job list)");
  }
  pb::SchedulerChoice saved;
  saved.set_name(req.name());
  const std::map<std::string, std::string> complete = CompleteText(req.name(), typed);
  saved.mutable_params()->insert(complete.begin(), complete.end());
  saved.set_file_name(config_.scheduler.name);
  const std::map<std::string, std::string> file =
      CompleteText(config_.scheduler.name, FileParams(config_));
  saved.mutable_file_params()->insert(file.begin(), file.end());
  MR_RETURN_IF_ERROR(history_->PutScheduler(saved));
  const std::string before = scheduler_->name();
  scheduler_ = std::move(made);
  scheduler_params_ = complete;
  scheduler_source_ = "set";
  // The new policy learns of every live worker as the old one did.
  for (const sched::Node& n : state_.nodes()) {
    if (n.live) scheduler_->OnNodeAdded(state_, n.id, Now());
  }
  spdlog::info("scheduler switched from '{}' to '{}' by `mrctl scheduler set`", before,
               scheduler_->name());
  ShowScheduler(reply);
  return Status::OK();
}

void JobTracker::ShowScheduler(pb::SchedulerChoice* reply) const {
  reply->set_name(scheduler_->name());
  reply->mutable_params()->insert(scheduler_params_.begin(), scheduler_params_.end());
  reply->set_source(scheduler_source_);
}

}  // namespace mr::master
