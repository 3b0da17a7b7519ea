// The lookups over the registry (FindJob, ResolveParams, MakeJob). The list
// itself is in registry.cc; Job's defaults are in job_api.cc.

#include "jobs/job.h"

#include <algorithm>

namespace mr::jobs {
namespace {

// "a, b, c", or "none".
std::string JoinNames(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string s;
  for (const std::string& n : names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

bool IsRequired(const ParamSpec& spec) {
  return spec.default_value.empty() && spec.help.starts_with("required");
}

}  // namespace

const JobInfo* FindJob(std::string_view name) {
  for (const JobInfo* info : RegisteredJobs()) {
    if (info->name == name) return info;
  }
  return nullptr;
}

Result<Params> ResolveParams(const JobInfo& info, const Params& params) {
  const std::string job = "job '" + info.name + "': ";
  std::vector<std::string> names;
  for (const ParamSpec& spec : info.params) names.push_back(spec.name);
  for (const auto& [name, value] : params) {
    if (!info.open_params && std::find(names.begin(), names.end(), name) == names.end()) {
      return Status::InvalidArgument(job + "unknown parameter '" + name +
                                     "' (parameters: " + JoinNames(names) + ")");
    }
  }
  Params resolved = params;
  for (const ParamSpec& spec : info.params) {
    auto [it, inserted] = resolved.emplace(spec.name, spec.default_value);
    if (IsRequired(spec) && it->second.empty()) {
      return Status::InvalidArgument(job + "parameter '" + spec.name + "' is required");
    }
  }
  return resolved;
}

std::string CodeHashOf(const JobInfo& info, const Params& params) {
  return info.code_hash_of != nullptr ? info.code_hash_of(params) : info.code_hash;
}

Result<std::unique_ptr<Job>> MakeJob(std::string_view name, const Params& params,
                                     const JobEnv& env) {
  const JobInfo* info = FindJob(name);
  if (info == nullptr) {
    std::vector<std::string> names;
    for (const JobInfo* j : RegisteredJobs()) names.push_back(j->name);
    return Status::InvalidArgument("unknown job '" + std::string(name) +
                                   "' (jobs: " + JoinNames(names) + ")");
  }
  MR_ASSIGN_OR_RETURN(Params resolved, ResolveParams(*info, params));
  std::unique_ptr<Job> job = info->make();
  job->set_env(env);
  MR_RETURN_IF_ERROR(job->Configure(resolved).WithContext("job '" + info->name + "'"));
  return job;
}

}  // namespace mr::jobs
