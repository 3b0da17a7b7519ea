// A real mr-master process for bench/master_scale: started with
// posix_spawn, stopped with SIGTERM, and measured through /proc.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/status.h"

namespace mr::bench {

class MasterProcess {
 public:
  MasterProcess(std::string binary, std::string config_path, std::string log_path)
      : binary_(std::move(binary)), config_(std::move(config_path)), log_(std::move(log_path)) {}
  ~MasterProcess() { Stop(); }

  Status Start();
  // SIGTERM, then waits for the exit (SIGKILL after 30 s). No-op when not running.
  void Stop();
  pid_t pid() const { return pid_; }

  // User + system CPU seconds the process has used (/proc/PID/stat).
  double CpuSeconds() const;
  // Resident set now and its peak (/proc/PID/status VmRSS, VmHWM), bytes.
  int64_t RssBytes() const { return StatusField("VmRSS:"); }
  int64_t PeakRssBytes() const { return StatusField("VmHWM:"); }

 private:
  int64_t StatusField(const char* name) const;

  std::string binary_, config_, log_;
  pid_t pid_ = -1;
};

// Runs `perf record -g` on `pid` into `out` until StopPerf (SIGINT).
pid_t StartPerf(pid_t pid, const std::string& out);
void StopPerf(pid_t perf);

}  // namespace mr::bench
