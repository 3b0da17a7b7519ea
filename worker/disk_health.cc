// DiskHealth: statvfs and probe writes of a worker's data directory.
#include "worker/disk_health.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <string>

#include <spdlog/spdlog.h>

namespace mr::worker {
namespace {

constexpr size_t kProbeBytes = 64 << 10;

std::string Mib(int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

DiskHealth::DiskHealth(std::string dir, int64_t min_free_bytes, int64_t block_bytes)
    : dir_(std::move(dir)), margin_bytes_(std::max(min_free_bytes, block_bytes)),
      block_bytes_(block_bytes) {}

std::string DiskHealth::Probe() const {
  const std::string path = dir_ + "/.write-probe";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot create " + path + ": " + std::strerror(errno);
  const std::string zeros(kProbeBytes, '\0');
  std::string why;
  const ssize_t n = ::write(fd, zeros.data(), zeros.size());
  if (n != static_cast<ssize_t>(zeros.size())) {
    why = "cannot write " + path + ": " + (n < 0 ? std::strerror(errno) : "short write");
  } else if (::fsync(fd) != 0) {
    why = "cannot sync " + path + ": " + std::strerror(errno);
  }
  ::close(fd);
  ::unlink(path.c_str());
  return why;
}

void DiskHealth::WriteFailed(std::string_view failure) {
  for (const int full : {ENOSPC, EDQUOT}) {
    if (failure.find(std::strerror(full)) == std::string_view::npos) continue;
    std::lock_guard lock(mu_);
    full_problem_ = "a write failed: " + std::string(failure.substr(0, 200));
    return;
  }
  std::string why = Probe();
  if (why.empty()) return;  // the failure was not the disk's
  std::lock_guard lock(mu_);
  write_problem_ = std::move(why);
}

DiskHealth::State DiskHealth::Check() {
  State st;
  struct statvfs fs {};
  if (::statvfs(dir_.c_str(), &fs) == 0) {
    st.free_bytes = static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
  }
  std::lock_guard lock(mu_);
  if (!write_problem_.empty()) write_problem_ = Probe();  // space may have returned
  // A full disk is full until there is room for the margin and a block more.
  if (!full_problem_.empty() && st.free_bytes >= margin_bytes_ + block_bytes_) full_problem_.clear();
  if (!full_problem_.empty()) {
    st.problem = full_problem_ + " (" + Mib(st.free_bytes) + " free)";
  } else if (!write_problem_.empty()) {
    st.problem = write_problem_;
  } else if (st.free_bytes >= 0 && st.free_bytes < margin_bytes_) {
    st.problem = Mib(st.free_bytes) + " free in " + dir_ + ", under the margin of " +
                 Mib(margin_bytes_) + " (min_free_bytes, and at least one block)";
  }
  if (st.problem.empty() != reported_.empty()) {
    if (st.problem.empty()) {
      spdlog::info("disk: {} can be written again ({} free)", dir_, Mib(st.free_bytes));
    } else {
      spdlog::warn("disk: cannot write: {}; the master will place nothing here", st.problem);
    }
  }
  reported_ = st.problem;
  return st;
}

}  // namespace mr::worker
