#include "worker/task_env.h"

#include <cctype>
#include <cstdio>
#include <filesystem>

namespace mr::worker {
namespace fs = std::filesystem;
namespace {

std::string Padded(int64_t n, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*lld", width, static_cast<long long>(n));
  return buf;
}

std::string ClusterTag(const std::string& cluster_name) {
  std::string tag;
  for (char c : cluster_name) {
    if (std::isalnum(static_cast<unsigned char>(c))) tag += c;
  }
  return tag.empty() ? "mr" : tag;
}

}  // namespace

std::string HadoopJobId(const std::string& cluster_name, int64_t job_id) {
  return "job_" + ClusterTag(cluster_name) + "_" + Padded(job_id, 4);
}

std::string HadoopTaskId(const std::string& cluster_name, const pb::TaskSpec& spec) {
  return "task_" + ClusterTag(cluster_name) + "_" + Padded(spec.job_id(), 4) + (spec.is_map() ? "_m_" : "_r_") +
         Padded(spec.index(), 6);
}

std::string HadoopAttemptId(const std::string& cluster_name, const pb::TaskSpec& spec) {
  return "attempt" + HadoopTaskId(cluster_name, spec).substr(4) + "_" + std::to_string(spec.attempt());
}

std::vector<std::string> HadoopTaskVariables(const std::string& cluster_name, const pb::TaskSpec& spec) {
  std::vector<std::string> env = {
      "mapreduce_job_id=" + HadoopJobId(cluster_name, spec.job_id()),
      "mapreduce_task_id=" + HadoopTaskId(cluster_name, spec),
      "mapreduce_task_attempt_id=" + HadoopAttemptId(cluster_name, spec),
      "mapreduce_task_partition=" + std::to_string(spec.index()),
      std::string("mapreduce_task_ismap=") + (spec.is_map() ? "true" : "false"),
  };
  if (spec.is_map()) {
    env.push_back("mapreduce_map_input_file=" + spec.file());
    env.push_back("mapreduce_map_input_start=" + std::to_string(spec.split_offset()));
    env.push_back("mapreduce_map_input_length=" + std::to_string(spec.split_length()));
  }
  return env;
}

Status MakeWorkDir(const std::string& work_dir, const std::string& files_dir) {
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  if (ec) return Status::IOError("cannot create '" + work_dir + "': " + ec.message());
  if (files_dir.empty()) return Status::OK();
  for (const auto& e : fs::directory_iterator(files_dir, ec)) {
    fs::create_symlink(e.path(), fs::path(work_dir) / e.path().filename(), ec);
    if (ec) return Status::IOError("cannot link '" + e.path().string() + "' into '" + work_dir + "': " + ec.message());
  }
  if (ec) return Status::IOError("cannot list '" + files_dir + "': " + ec.message());
  return Status::OK();
}

}  // namespace mr::worker
