// Small helpers the map-task benchmarks share (map_task_throughput.cc,
// compressed_input.cc): timing, medians, whole files, a pread ReadFn.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "jobs/line_reader.h"

namespace mr::bench {

// CPU seconds this process (by default) or the calling thread used so far.
inline double CpuSeconds(clockid_t clock = CLOCK_PROCESS_CPUTIME_ID) {
  timespec ts;
  ::clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

// REQUIRES: !v.empty().
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// A ReadFn over `fd` with pread (what a worker's local block read does).
inline jobs::LineReader::ReadFn PreadFn(int fd) {
  return [fd](int64_t offset, int64_t n, std::string* out) {
    out->resize(static_cast<size_t>(n));
    for (int64_t done = 0; done < n;) {
      const ssize_t got = ::pread(fd, out->data() + done, static_cast<size_t>(n - done), offset + done);
      if (got <= 0) return Status::IOError("pread failed");
      done += got;
    }
    return Status::OK();
  };
}

}  // namespace mr::bench
