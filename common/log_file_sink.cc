#include "common/log_file_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace mr {

RotatingFileSink::RotatingFileSink(std::string path, int64_t max_bytes, int max_files)
    : path_(std::move(path)), max_bytes_(max_bytes), max_files_(max_files < 1 ? 1 : max_files) {}

RotatingFileSink::~RotatingFileSink() { CloseLocked(); }

Status RotatingFileSink::Open() {
  std::lock_guard lock(mutex_);
  return OpenLocked();
}

Status RotatingFileSink::Reopen() {
  std::lock_guard lock(mutex_);
  CloseLocked();
  return OpenLocked();
}

Status RotatingFileSink::OpenLocked() {
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0)
    return Status::IOError("cannot open log file '" + path_ + "': " + std::strerror(errno));
  struct stat st {};
  int rc = ::fstat(fd, &st);
  // A file left by an older version (0644) is made private.
  if (rc == 0 && (st.st_mode & 077) != 0) rc = ::fchmod(fd, st.st_mode & 0700);
  if (rc != 0) {
    const int saved = errno;
    ::close(fd);
    return Status::IOError("cannot make log file '" + path_ + "' private: " + std::strerror(saved));
  }
  fd_ = fd;
  size_ = st.st_size;
  return Status::OK();
}

void RotatingFileSink::CloseLocked() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  size_ = 0;
}

void RotatingFileSink::RotateLocked() {
  CloseLocked();
  // rename() replaces the target, so the oldest file drops out here.
  for (int n = max_files_; n >= 2; --n) {
    const std::string from = path_ + "." + std::to_string(n - 1);
    std::rename(from.c_str(), (path_ + "." + std::to_string(n)).c_str());  // ENOENT is fine
  }
  std::rename(path_.c_str(), (path_ + ".1").c_str());
  (void)OpenLocked();  // on failure the next line tries again
}

void RotatingFileSink::sink_it_(const spdlog::details::log_msg& msg) {
  spdlog::memory_buf_t line;
  formatter_->format(msg, line);
  const auto len = static_cast<int64_t>(line.size());
  if (fd_ >= 0 && max_bytes_ > 0 && size_ > 0 && size_ + len > max_bytes_) RotateLocked();
  if (fd_ < 0 && !OpenLocked().ok()) return;  // nowhere to write; nothing else can be done
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // disk full: the line is lost, the daemon goes on
    p += n;
    left -= static_cast<size_t>(n);
  }
  size_ += len - static_cast<int64_t>(left);
}

}  // namespace mr
