#include "worker/job_files.h"

#include <sys/stat.h>

#include <filesystem>

#include "jobs/digest.h"
#include "jobs/streaming.h"

namespace mr::worker {
namespace fs = std::filesystem;

Result<std::string> JobFiles::Ensure(int64_t job, const std::string& job_dir,
                                     const jobs::Params& params, const GetFn& get) {
  auto param = [&params](const char* name) {
    auto it = params.find(name);
    return it == params.end() ? std::string() : it->second;
  };
  MR_ASSIGN_OR_RETURN(std::vector<jobs::ShippedFile> files, jobs::ParseShippedFiles(param("files")));
  if (files.empty()) return std::string();
  const std::string dfs_dir = param("files_dir");
  if (!dfs_dir.starts_with("/.mr/")) {
    return Status::InvalidArgument("parameter 'files_dir' must name the job's directory under /.mr/, not '" +
                                   dfs_dir + "'");
  }
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard lock(mu_);
    auto& e = jobs_[job];
    if (!e) e = std::make_shared<Entry>();
    entry = e;
  }
  std::lock_guard lock(entry->mu);
  if (!entry->dir.empty()) return entry->dir;
  const std::string dir = job_dir + "/files";
  const std::string tmp = dir + ".tmp";
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) return Status::IOError("cannot create '" + tmp + "': " + ec.message());
  Status s;
  for (const jobs::ShippedFile& f : files) {
    const std::string local = tmp + "/" + f.name;
    s = get(dfs_dir + "/" + f.name, local).WithContext("fetching shipped file " + f.name);
    if (!s.ok()) break;
    auto digest = jobs::Sha256FileHex(local);
    if (!digest.ok()) {
      s = digest.status();
      break;
    }
    if (*digest != f.sha256) {
      s = Status::Corruption("shipped file " + f.name + " has SHA-256 " + digest->substr(0, 16) +
                             "…, not " + f.sha256.substr(0, 16) + "… as submitted");
      break;
    }
    ::chmod(local.c_str(), f.executable ? 0700 : 0600);
  }
  if (s.ok()) {
    fs::remove_all(dir, ec);
    fs::rename(tmp, dir, ec);
    if (ec) s = Status::IOError("cannot rename '" + tmp + "': " + ec.message());
  }
  if (!s.ok()) {
    fs::remove_all(tmp, ec);
    return s;
  }
  entry->dir = dir;
  return dir;
}

void JobFiles::Forget(int64_t job) {
  std::lock_guard lock(mu_);
  jobs_.erase(job);
}

}  // namespace mr::worker
