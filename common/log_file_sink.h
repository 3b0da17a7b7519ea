// The log file sink of InitLogging (common/log.h): appends formatted lines to
// one private file (created 0600), rotates it by size, and reopens it on
// request (SIGHUP, after logrotate moved it away). Internal to common/;
// binaries reach it through InitLogging and ReopenLogFile.
//
// Thread-safe: spdlog's base_sink serialises every call on its mutex.
#pragma once

#include <spdlog/sinks/base_sink.h>

#include <cstdint>
#include <mutex>
#include <string>

#include "common/status.h"

namespace mr {

class RotatingFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // `max_bytes`: rotate before a line would make the file larger than this;
  // 0 = never. `max_files`: rotated files kept (<path>.1 is the newest,
  // <path>.<max_files> the oldest; an older one is deleted). Opens nothing
  // until Open().
  RotatingFileSink(std::string path, int64_t max_bytes, int max_files);
  ~RotatingFileSink() override;

  // Opens (creating with mode 0600, or taking group and other permissions
  // off an existing file) `path` for appending. IOError naming the file.
  Status Open();
  // Closes the file and opens `path` again: after logrotate renamed it, the
  // next lines go to a new file at `path`. Called by ReopenLogFile.
  Status Reopen();

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}  // every line is one write(2); nothing is buffered

 private:
  Status OpenLocked();
  void CloseLocked();
  // <path>.<n-1> -> <path>.<n> for n = max_files_ .. 2, <path> -> <path>.1,
  // then a new <path>.
  void RotateLocked();

  const std::string path_;
  const int64_t max_bytes_;
  const int max_files_;
  int fd_ = -1;
  int64_t size_ = 0;  // bytes in the open file
};

}  // namespace mr
