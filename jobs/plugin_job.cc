// The built-in job "plugin": runs a job from a shipped .so (jobs/plugin.h).
// Its `so` parameter names the shared object among the shipped files
// (JobEnv::files_dir); every other parameter not reserved here is the
// plug-in's own. Configure() checks the file's SHA-256 against the `files`
// parameter, dlopen()s it, checks its entry points and API version and
// makes the plug-in's job, to which every call is forwarded.
//
// Where it runs: mr-local runs it in its own process; a worker never does:
// it runs a plug-in job's tasks in a child process, mr-task
// (worker/task_child.h), so a plug-in that crashes or loops fails one
// attempt and not the worker. The master and mrctl never make this job
// (JobInfo::runs_user_code).
#include <dlfcn.h>

#include <memory>
#include <mutex>

#include "jobs/all_jobs.h"
#include "jobs/code_hashes.h"
#include "jobs/digest.h"
#include "jobs/job_util.h"
#include "jobs/plugin.h"
#include "jobs/plugin_loader.h"
#include "jobs/streaming.h"

namespace mr::jobs {
namespace {

bool IsReserved(const std::string& name) {
  return name == "so" || name == "files" || name == "files_dir" || name == "timeout_ms" ||
         name == "plugin_name";
}

// The shipped-file entry of the .so, or InvalidArgument.
Result<ShippedFile> SoEntry(const Params& params) {
  const std::string so = GetParam(params, "so");
  if (so.empty()) return Status::InvalidArgument("parameter 'so' is required");
  MR_ASSIGN_OR_RETURN(std::vector<ShippedFile> files, ParseShippedFiles(GetParam(params, "files")));
  for (ShippedFile& f : files) {
    if (f.name == so) return f;
  }
  return Status::InvalidArgument("plug-in '" + so + "' is not among the shipped files");
}

}  // namespace

Result<const JobInfo*> LoadPlugin(const std::string& path, const std::string& name) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = ::dlerror();
    return Status::InvalidArgument("cannot load plug-in " + name + ": " + (e ? e : "dlopen failed"));
  }
  auto version = reinterpret_cast<int (*)()>(::dlsym(handle, "mr_job_api_version"));
  auto info = reinterpret_cast<const JobInfo* (*)()>(::dlsym(handle, "mr_job_info"));
  if (version == nullptr || info == nullptr) {
    return Status::InvalidArgument("plug-in " + name + " has no entry point mr_job_api_version/"
                                   "mr_job_info (end its source with MR_JOB_PLUGIN(its JobInfo), "
                                   "jobs/plugin.h)");
  }
  if (version() != MR_JOB_API_VERSION) {
    return Status::InvalidArgument("plug-in " + name + " was built against job API version " +
                                   std::to_string(version()) + "; this runtime has version " +
                                   std::to_string(MR_JOB_API_VERSION) +
                                   " (rebuild it against this SDK)");
  }
  const JobInfo* job = info();
  if (job == nullptr || job->make == nullptr) {
    return Status::InvalidArgument("plug-in " + name + ": mr_job_info() gave no job to make");
  }
  return job;
}

namespace {

class PluginJob : public Job {
 public:
  Status Configure(const Params& params) override {
    MR_ASSIGN_OR_RETURN(ShippedFile so, SoEntry(params));
    const std::string path = (env().files_dir.empty() ? "." : env().files_dir) + "/" + so.name;
    MR_ASSIGN_OR_RETURN(std::string digest, Sha256FileHex(path));
    if (digest != so.sha256) {
      return Status::Corruption("plug-in " + so.name + " has SHA-256 " + digest.substr(0, 16) +
                                "…, not " + so.sha256.substr(0, 16) + "… as submitted");
    }
    MR_ASSIGN_OR_RETURN(const JobInfo* info, LoadPlugin(path, so.name));
    if (const std::string named = GetParam(params, "plugin_name"); !named.empty() && named != info->name) {
      return Status::InvalidArgument("plug-in " + so.name + " is now named '" + info->name +
                                     "', not '" + named + "' as submitted");
    }
    Params own;
    for (const auto& [k, v] : params) {
      if (!IsReserved(k)) own[k] = v;
    }
    MR_ASSIGN_OR_RETURN(own, ResolveParams(*info, own));
    inner_ = info->make();
    inner_->set_env(env());
    return inner_->Configure(own).WithContext("plug-in " + info->name);
  }
  void Map(std::string_view line, const LineInfo& info, Emitter& out) override { inner_->Map(line, info, out); }
  void FinishMap(Emitter& out) override { inner_->FinishMap(out); }
  void Reduce(std::string_view key, ValueStream& values, Emitter& out) override {
    inner_->Reduce(key, values, out);
  }
  void FinishReduce(Emitter& out) override { inner_->FinishReduce(out); }
  bool has_combiner() const override { return inner_->has_combiner(); }
  void Combine(std::string_view key, ValueStream& values, Emitter& out) override {
    inner_->Combine(key, values, out);
  }
  CombinerKind combiner_kind() const override { return inner_->combiner_kind(); }
  int Partition(std::string_view key, int reducers) const override { return inner_->Partition(key, reducers); }
  int lookahead_lines() const override { return inner_->lookahead_lines(); }
  void WriteOutput(std::string_view key, std::string_view value, std::string* out) const override {
    inner_->WriteOutput(key, value, out);
  }
  Status Plan(const std::vector<std::string>& sample, int reducers, Params* params) override {
    return inner_->Plan(sample, reducers, params);
  }

 private:
  std::unique_ptr<Job> inner_;
};

// JoSS Fig. 4 line 1: a plug-in's code is its .so.
std::string PluginCodeHash(const Params& params) {
  auto so = SoEntry(params);
  return so.ok() ? so->sha256.substr(0, 16) : std::string("unknown-plugin");
}

}  // namespace

const JobInfo kPluginJob = {
    .name = "plugin",
    .description = "a job from a shipped .so (mrctl job run ./myjob.so; docs/user-jobs.md)",
    .params = {{"so", "", "required: the plug-in's file name among the shipped files"},
               {"files", "", "shipped files NAME:SHA256:x|-;... (mrctl fills it in)"},
               {"files_dir", "", "DFS directory of the shipped files (mrctl fills it in)"},
               {"timeout_ms", "0", "kill a task's process after this long (0: [jobs] task_timeout_ms)"},
               {"plugin_name", "", "the plug-in's own name, as mrctl found it at submission"}},
    .code_hash = kCodeHashPlugin,
    .make = []() -> std::unique_ptr<Job> { return std::make_unique<PluginJob>(); },
    .code_hash_of = &PluginCodeHash,
    .open_params = true,
    .runs_user_code = true,
};

}  // namespace mr::jobs
