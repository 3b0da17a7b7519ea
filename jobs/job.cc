// Job's defaults (Partition, WriteOutput) and the lookups over the registry
// (FindJob, ResolveParams, MakeJob). The list itself is in registry.cc.

#include "jobs/job.h"

#include <xxhash.h>

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

int Job::Partition(std::string_view key, int reducers) const {
  return static_cast<int>(XXH3_64bits(key.data(), key.size()) % static_cast<uint64_t>(reducers));
}

void Job::WriteOutput(std::string_view key, std::string_view value, std::string* out) const {
  out->append(key);
  out->push_back('\t');
  out->append(value);
  out->push_back('\n');
}

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
    if (std::find(names.begin(), names.end(), name) == names.end()) {
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

Result<std::unique_ptr<Job>> MakeJob(std::string_view name, const Params& params) {
  const JobInfo* info = FindJob(name);
  if (info == nullptr) {
    std::vector<std::string> names;
    for (const JobInfo* j : RegisteredJobs()) names.push_back(j->name);
    return Status::InvalidArgument("unknown job '" + std::string(name) +
                                   "' (jobs: " + JoinNames(names) + ")");
  }
  MR_ASSIGN_OR_RETURN(Params resolved, ResolveParams(*info, params));
  std::unique_ptr<Job> job = info->make();
  MR_RETURN_IF_ERROR(job->Configure(resolved).WithContext("job '" + info->name + "'"));
  return job;
}

}  // namespace mr::jobs
