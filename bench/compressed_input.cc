// compressed_input: one WordCount map task (RunMapTask, as a worker runs it)
// over the same text, plain and compressed, in one invocation
// (bench/compressed_input.sh makes the files and prints the load).
//
//   compressed_input FILE [--runs 3] [--reducers 2] [--work-dir DIR] [--only zstd|gzip]
//
// Reads FILE, FILE.zst and FILE.gz (each must exist and decompress to FILE;
// --only: FILE and the one named, e.g. under perf record),
// each as one split through the page cache (one untimed pass warms it); a
// compressed one through jobs::DecompressedInput, as a worker reads a
// compressed input. Inputs run round-robin, so that load from other
// processes hits them alike. Prints one line per input: the compressed
// size; median wall seconds, MB/s of text (FILE's bytes / 1e6 / median
// wall) and the ratio of that throughput to the plain file's; the same by
// median CPU seconds of the task, of all its threads (the decode thread's
// included; on a loaded machine the steadier figure); and the median CPU
// seconds of the map's own thread, which sets the wall time when a core is
// free for the decode thread (compressed_input's only other thread).
// Exits 1 when a task fails or the map outputs differ.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "jobs/decompressed_input.h"
#include "worker/task_runner.h"

namespace {

namespace fs = std::filesystem;
using mr::Status;

struct Input {
  std::string name;  // "plain", "zstd", "gzip"
  std::string path;
  mr::jobs::Codec codec;
  std::vector<double> wall, cpu, map_cpu;  // map_cpu: the map thread's
  std::string output;  // map output of the last run
};

using mr::bench::CpuSeconds;
using mr::bench::Median;
using mr::bench::PreadFn;
using mr::bench::ReadAll;

// One timed WordCount map task over `in`; adds to its runs.
Status RunOnce(Input& in, int reducers, const std::string& work_dir) {
  const int fd = ::open(in.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + in.path);
  const auto length = static_cast<int64_t>(fs::file_size(in.path));
  mr::worker::MapTaskSpec spec;
  spec.job = "wordcount";
  spec.reducers = reducers;
  spec.file = in.path;
  spec.file_length = spec.split_length = length;
  spec.work_dir = work_dir + "/" + in.name;
  fs::remove_all(spec.work_dir);
  fs::create_directories(spec.work_dir);
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds(), map_cpu0 = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  mr::jobs::LineReader::ReadFn read = PreadFn(fd);
  std::optional<mr::jobs::DecompressedInput> decompressed;  // as worker/task_bodies.cc reads it
  if (in.codec != mr::jobs::Codec::kNone) {
    decompressed.emplace(in.codec, in.path, length, read);
    read = decompressed->AsReadFn();
    spec.file_length = spec.split_length = mr::jobs::LineReader::kUnknownLength;
  }
  auto result = mr::worker::RunMapTask(spec, read);
  const double cpu = CpuSeconds() - cpu0, map_cpu = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - map_cpu0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  ::close(fd);
  if (!result.ok()) return result.status().WithContext(in.name);
  in.wall.push_back(wall);
  in.cpu.push_back(cpu);
  in.map_cpu.push_back(map_cpu);
  in.output = ReadAll(result->output_path);
  std::fprintf(stderr, "run %zu %-6s %6.2f s wall %6.2f s CPU %6.2f s map thread\n", in.wall.size(), in.name.c_str(),
               wall, cpu, map_cpu);
  return Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  std::string file, work_dir, only;
  int runs = 3, reducers = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!arg.starts_with("--") && file.empty()) {
      file = arg;
    } else if (value != nullptr && arg == "--runs") {
      runs = std::atoi(argv[++i]);
    } else if (value != nullptr && arg == "--reducers") {
      reducers = std::atoi(argv[++i]);
    } else if (value != nullptr && arg == "--work-dir") {
      work_dir = argv[++i];
    } else if (value != nullptr && arg == "--only") {
      only = argv[++i];
    } else {
      file.clear();
      break;
    }
  }
  if (file.empty() || runs < 1 || reducers < 1) {
    std::fprintf(stderr, "usage: compressed_input FILE [--runs 3] [--reducers 2] [--work-dir DIR] [--only zstd|gzip]\n");
    return 2;
  }
  if (work_dir.empty()) work_dir = file + ".work";
  std::vector<Input> inputs = {{"plain", file, mr::jobs::Codec::kNone},
                               {"zstd", file + ".zst", mr::jobs::Codec::kZstd},
                               {"gzip", file + ".gz", mr::jobs::Codec::kGzip}};
  if (!only.empty()) {
    std::erase_if(inputs, [&](const Input& in) { return in.name != "plain" && in.name != only; });
    if (inputs.size() != 2) {
      std::fprintf(stderr, "compressed_input: --only takes zstd or gzip, not '%s'\n", only.c_str());
      return 2;
    }
  }
  for (const Input& in : inputs) {
    if (!fs::exists(in.path)) {
      std::fprintf(stderr, "compressed_input: %s does not exist\n", in.path.c_str());
      return 1;
    }
    ReadAll(in.path);  // warm the page cache
  }
  for (int r = 0; r < runs; ++r) {
    for (Input& in : inputs) {
      if (Status s = RunOnce(in, reducers, work_dir); !s.ok()) {
        std::fprintf(stderr, "compressed_input: %s\n", s.ToString().c_str());
        return 1;
      }
    }
  }
  fs::remove_all(work_dir);
  const double text_mb = static_cast<double>(fs::file_size(file)) / 1e6;
  const double plain = Median(inputs[0].wall), plain_cpu = Median(inputs[0].cpu);
  const double plain_map = Median(inputs[0].map_cpu);
  std::printf("WordCount, one map task over %.1f MB of text, %d runs each (median):\n", text_mb, runs);
  for (const Input& in : inputs) {
    const double wall = Median(in.wall), cpu = Median(in.cpu), map_cpu = Median(in.map_cpu);
    std::printf("  %-6s %8.1f MB file  %6.2f s wall  %7.1f MB/s  %5.2fx plain's  |  %6.2f s CPU  %7.1f MB/CPU-s  "
                "%5.2fx plain's  |  map thread %6.2f s CPU  %5.2fx plain's\n",
                in.name.c_str(), static_cast<double>(fs::file_size(in.path)) / 1e6, wall, text_mb / wall,
                plain / wall, cpu, text_mb / cpu, plain_cpu / cpu, map_cpu, plain_map / map_cpu);
  }
  for (const Input& in : inputs) {
    if (in.output != inputs[0].output) {
      std::fprintf(stderr, "compressed_input: %s's map output differs from the plain file's\n", in.name.c_str());
      return 1;
    }
  }
  return 0;
}
