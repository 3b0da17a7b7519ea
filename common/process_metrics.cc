// ProcessFamilies (common/process_metrics.h): proc(5) read the way the
// Prometheus Go client's process collector reads it.
#include "common/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "common/version.h"

namespace mr {
namespace {

namespace pm = prometheus;

pm::MetricFamily Family(const char* name, const char* help, pm::MetricType type, double value) {
  pm::ClientMetric m;
  if (type == pm::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  return {name, help, type, {m}};
}

// Fields of /proc/self/stat after the command name, from field 3 (state):
// fields[0] is field 3, so field n is fields[n - 3].
std::vector<std::string> StatFields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  std::getline(in, line);
  const size_t close = line.rfind(')');  // the command name may hold spaces
  std::vector<std::string> fields;
  if (close == std::string::npos) return fields;
  std::istringstream rest(line.substr(close + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

// The boot time (seconds since the epoch), the "btime" line of /proc/stat.
std::optional<double> BootTime() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double t = 0;
      if (in >> t) return t;
      return std::nullopt;
    }
    in.ignore(1 << 20, '\n');
  }
  return std::nullopt;
}

int OpenFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int n = 0;
  while (const dirent* e = ::readdir(dir)) n += e->d_name[0] != '.';
  ::closedir(dir);
  return n - 1;  // the directory stream's own descriptor
}

}  // namespace

std::vector<pm::MetricFamily> ProcessFamilies() {
  std::vector<pm::MetricFamily> out;
  const std::vector<std::string> f = StatFields();
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  // utime 14, stime 15, starttime 22, vsize 23, rss 24 (proc(5)).
  if (f.size() >= 22 && ticks > 0) {
    out.push_back(Family("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                         pm::MetricType::Counter, (std::stod(f[11]) + std::stod(f[12])) / ticks));
    if (const auto boot = BootTime()) {
      out.push_back(Family("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                           pm::MetricType::Gauge, *boot + std::stod(f[19]) / ticks));
    }
    out.push_back(Family("process_virtual_memory_bytes", "Virtual memory size in bytes.", pm::MetricType::Gauge,
                         std::stod(f[20])));
    out.push_back(Family("process_resident_memory_bytes", "Resident memory size in bytes.", pm::MetricType::Gauge,
                         std::stod(f[21]) * page));
  }
  if (const int fds = OpenFds(); fds >= 0) {
    out.push_back(Family("process_open_fds", "Number of open file descriptors.", pm::MetricType::Gauge, fds));
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    out.push_back(Family("process_max_fds", "Maximum number of open file descriptors.", pm::MetricType::Gauge,
                         static_cast<double>(limit.rlim_cur)));
  }
  pm::MetricFamily info = Family("mr_build_info", "The running binary's version, git commit and build type (always 1)",
                                 pm::MetricType::Gauge, 1);
  info.metric[0].label = {{"build_type", kBuildType}, {"commit", kGitCommit}, {"version", kVersion}};
  out.push_back(std::move(info));
  return out;
}

}  // namespace mr
