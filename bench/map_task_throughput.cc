// map_task_throughput: how fast one map task of WordCount (or another job
// with a `combiner` parameter) runs (RunMapTask: read the split, Map,
// partition, buffer, spill, merge, write the map output), for each way the
// map side can combine, in one invocation.
//
//   map_task_throughput FILE [--size 256M] [--reducers 2] [--runs 3]
//                            [--sort-buffer-mib 64] [--work-dir DIR] [--only MODE]
//                            [--job wordcount|sequencecount|permu]
//
// FILE is generated first when it does not exist, with the bytes of
// `mrctl gen text FILE --size SIZE --seed 1` (`gen dna` for permu). The whole
// file is one split and is read through the page cache (one untimed pass
// warms it). Modes, run round-robin so that load from other processes hits
// them alike:
//   aggregate     combiner on, counted in a hash table (MapTaskSpec default)
//   sort+combine  combiner on, generic path: sort every pair, Combine at
//                 every spill and merge (aggregate_counts = false)
//   no-combiner   combiner=false: sort and spill every pair
// Prints one line per mode: median wall seconds, MB/s (input bytes / 1e6 /
// median wall), median CPU seconds, spills, and the ratio to sort+combine.
// Exits 1 when aggregate and sort+combine write different map output (they
// must be byte-identical) or a task fails. --only MODE runs just that mode
// (for perf record).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "common/datagen.h"
#include "worker/task_runner.h"

namespace {

namespace fs = std::filesystem;
using mr::Status;

struct Mode {
  const char* name;
  bool combiner;
  bool aggregate;
};

struct Runs {
  std::vector<double> wall, cpu;  // seconds, one per run
  int64_t spills = 0;
  std::string last_output;  // map output bytes of the last run
};

using mr::bench::CpuSeconds;
using mr::bench::Median;
using mr::bench::PreadFn;
using mr::bench::ReadAll;

// "256M", "1G", "4096": bytes, binary multiples; -1 when malformed.
int64_t ParseSize(const std::string& text) {
  char* end = nullptr;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  const std::string unit = end;
  const int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  return n < 0 || end == text.c_str() || shift < 0 ? -1 : static_cast<int64_t>(n) << shift;
}

int Usage() {
  std::fprintf(stderr,
               "usage: map_task_throughput FILE [--size 256M] [--reducers 2] [--runs 3]\n"
               "                            [--sort-buffer-mib 64] [--work-dir DIR] [--only MODE]\n"
               "                            [--job wordcount|sequencecount|permu]\n");
  return 2;
}

struct Args {
  std::string file, size = "256M", work_dir, only, job = "wordcount";
  int reducers = 2, runs = 3;
  int64_t sort_buffer_mib = 64;
};

bool Parse(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!arg.starts_with("--") && a->file.empty()) {
      a->file = arg;
      continue;
    }
    if (value == nullptr) return false;
    ++i;
    if (arg == "--size")
      a->size = value;
    else if (arg == "--reducers")
      a->reducers = std::atoi(value);
    else if (arg == "--runs")
      a->runs = std::atoi(value);
    else if (arg == "--sort-buffer-mib")
      a->sort_buffer_mib = std::atoll(value);
    else if (arg == "--work-dir")
      a->work_dir = value;
    else if (arg == "--only")
      a->only = value;
    else if (arg == "--job")
      a->job = value;
    else
      return false;
  }
  return !a->file.empty() && a->reducers >= 1 && a->runs >= 1 && a->sort_buffer_mib >= 1 &&
         (a->job == "wordcount" || a->job == "sequencecount" || a->job == "permu");
}

// Writes FILE like `mrctl gen text|dna FILE --size SIZE --seed 1` unless it exists.
Status GenerateIfMissing(const Args& a) {
  if (fs::exists(a.file)) return Status::OK();
  const int64_t bytes = ParseSize(a.size);
  if (bytes < 0) return Status::InvalidArgument("bad --size '" + a.size + "'");
  std::ofstream out(a.file, std::ios::binary);
  const auto kind = a.job == "permu" ? mr::tools::GenKind::kDna : mr::tools::GenKind::kText;
  MR_RETURN_IF_ERROR(mr::tools::Generate(kind, bytes, /*seed=*/1, out));
  out.close();
  return out ? Status::OK() : Status::IOError("cannot write " + a.file);
}

// One timed RunMapTask of mode `m` over the whole file; adds to *runs.
Status RunOnce(const Args& a, const Mode& m, int fd, int64_t length, Runs* runs) {
  mr::worker::MapTaskSpec spec;
  spec.job = a.job;
  spec.params = {{"combiner", m.combiner ? "true" : "false"}};
  spec.reducers = a.reducers;
  spec.file = a.file;
  spec.file_length = length;
  spec.split_length = length;
  spec.sort_buffer_bytes = a.sort_buffer_mib << 20;
  spec.aggregate_counts = m.aggregate;
  spec.work_dir = a.work_dir + "/" + m.name;
  fs::remove_all(spec.work_dir);
  fs::create_directories(spec.work_dir);
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds();
  auto result = mr::worker::RunMapTask(spec, PreadFn(fd));
  const double cpu = CpuSeconds() - cpu0;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (!result.ok()) return result.status().WithContext(m.name);
  runs->wall.push_back(wall);
  runs->cpu.push_back(cpu);
  runs->spills = result->index.spills;
  runs->last_output = ReadAll(result->output_path);
  std::fprintf(stderr, "run %zu %-12s %6.2f s wall %6.2f s CPU\n", runs->wall.size(), m.name, wall,
               cpu);
  return Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!Parse(argc, argv, &a)) return Usage();
  Status s = GenerateIfMissing(a);
  const int fd = s.ok() ? ::open(a.file.c_str(), O_RDONLY | O_CLOEXEC) : -1;
  if (s.ok() && fd < 0) s = Status::IOError("cannot open " + a.file);
  if (!s.ok()) {
    std::fprintf(stderr, "map_task_throughput: %s\n", s.ToString().c_str());
    return 1;
  }
  const int64_t length = static_cast<int64_t>(fs::file_size(a.file));
  ReadAll(a.file);  // warm the page cache
  if (a.work_dir.empty()) {
    char tmpl[] = "/tmp/map_task_throughput.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return 1;
    a.work_dir = tmpl;
  }

  const std::vector<Mode> modes = {
      {"aggregate", true, true}, {"sort+combine", true, false}, {"no-combiner", false, false}};
  std::vector<Runs> got(modes.size());
  for (int run = 0; run < a.runs && s.ok(); ++run) {
    for (size_t i = 0; i < modes.size() && s.ok(); ++i) {
      if (a.only.empty() || a.only == modes[i].name) s = RunOnce(a, modes[i], fd, length, &got[i]);
    }
  }
  fs::remove_all(a.work_dir);
  if (!s.ok()) {
    std::fprintf(stderr, "map_task_throughput: %s\n", s.ToString().c_str());
    return 1;
  }
  if (!a.only.empty()) return 0;

  const double base = Median(got[1].wall);
  std::printf("input %s: %.1f MB, %s, %d reducers, %lld MiB sort buffer, %d runs\n", a.file.c_str(),
              length / 1e6, a.job.c_str(), a.reducers, static_cast<long long>(a.sort_buffer_mib),
              a.runs);
  std::printf("%-13s %9s %8s %9s %7s %16s\n", "mode", "median_s", "MB/s", "cpu_s", "spills",
              "vs sort+combine");
  for (size_t i = 0; i < modes.size(); ++i) {
    const double wall = Median(got[i].wall);
    std::printf("%-13s %9.2f %8.1f %9.2f %7lld %15.2fx\n", modes[i].name, wall, length / 1e6 / wall,
                Median(got[i].cpu), static_cast<long long>(got[i].spills), base / wall);
  }
  if (got[0].last_output != got[1].last_output) {
    std::fprintf(stderr, "map_task_throughput: aggregate and sort+combine outputs differ\n");
    return 1;
  }
  std::printf("aggregate and sort+combine map outputs are byte-identical (%zu bytes)\n",
              got[0].last_output.size());
  return 0;
}
