// libFuzzer harness: mr-sim's scenario parser (sim/scenario_file.cc) and the
// workload generator it feeds, with its trace reader (sim/workload.cc).
//
// Input: a scenario file's TOML text, optionally followed by a line
// "#--trace--" and the text of a trace file, which the harness writes to
// trace.csv in a private temporary directory (the scenario's directory, so
// `trace = "trace.csv"` finds it). A scenario that parses then has its
// workload generated (MakeWorkload), unless it asks for more than a fuzzing
// run should build: over 200 nodes, 2000 pool blocks, 200 jobs or 100000
// maps in all (those limits are the harness's, not the simulator's).
//
// Checks: parsing and generation return a Status and never crash, throw or
// hang; in a generated workload every block a job reads exists and its
// replicas are nodes of the cluster.
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "sim/scenario_file.h"
#include "sim/simulator.h"

namespace {

[[noreturn]] void Fail(const std::string& why) {
  std::fprintf(stderr, "FUZZ FAILURE: %s\n", why.c_str());
  std::abort();
}

std::string g_dir;

void RemoveDir() {
  std::error_code ec;
  std::filesystem::remove_all(g_dir, ec);
}

// The largest value of a trace's maps and reduces fields (the third and
// fourth); a field that is not a number counts 0 (the reader refuses it).
int64_t MaxTraceTasks(std::string_view trace) {
  int64_t most = 0;
  while (!trace.empty()) {
    const size_t eol = trace.find('\n');
    std::string_view line = trace.substr(0, eol);
    trace.remove_prefix(eol == std::string_view::npos ? trace.size() : eol + 1);
    for (int field = 0; !line.empty(); ++field) {
      const size_t comma = line.find(',');
      std::string_view f = line.substr(0, comma);
      line.remove_prefix(comma == std::string_view::npos ? line.size() : comma + 1);
      while (!f.empty() && (f.front() == ' ' || f.front() == '\t')) f.remove_prefix(1);
      int64_t v = 0;
      std::from_chars(f.data(), f.data() + f.size(), v);
      if (field >= 2) most = std::max(most, v);
    }
  }
  return most;
}

// Whether the workload is small enough to generate on every input.
bool SmallEnough(const mr::sim::Scenario& sc, std::string_view trace) {
  const auto& w = sc.workload;
  if (sc.cluster.nodes > 200 || sc.data.pool_blocks > 2000) return false;
  if (!w.trace.empty()) return MaxTraceTasks(trace) <= 1000 && trace.size() < 20000;
  double maps = 0;
  double jobs = 0;
  for (const auto& c : w.classes) {
    jobs += std::max(0, c.count);
    maps += std::max(0, c.count) * std::max(1.0, c.maps * w.scale);
  }
  if (w.classes.empty()) {
    using Kind = mr::sim::SizeDist::Kind;
    const double per_job = w.sizes.kind == Kind::kFixed    ? w.sizes.fixed
                           : w.sizes.kind == Kind::kPareto ? w.sizes.max
                                                           : 5000;
    if (w.duration_ms > 0) {
      if (w.mean_interarrival_ms <= 0) return false;
      jobs = static_cast<double>(w.duration_ms) / w.mean_interarrival_ms + w.jobs;
    } else {
      jobs = w.jobs;
    }
    maps = jobs * std::max(1.0, per_job);
  }
  return jobs <= 200 && maps <= 100000;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "mr-fuzz-sim-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) Fail("mkdtemp failed");
  g_dir = tmpl;
  std::atexit(RemoveDir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kMark = "#--trace--\n";
  std::string_view text = in, trace;
  if (const size_t at = in.find(kMark); at != std::string_view::npos) {
    text = in.substr(0, at);
    trace = in.substr(at + kMark.size());
  }
  const std::string trace_path = g_dir + "/trace.csv";
  {
    std::ofstream out(trace_path, std::ios::binary | std::ios::trunc);
    out.write(trace.data(), static_cast<std::streamsize>(trace.size()));
  }
  auto scenario = mr::sim::ParseScenario(std::string(text), "fuzz.toml", g_dir, {});
  if (!scenario.ok()) {
    if (scenario.status().message().empty()) Fail("error without a message");
    return 0;
  }
  if (!SmallEnough(*scenario, trace)) return 0;
  auto workload = mr::sim::MakeWorkload(*scenario);
  if (!workload.ok()) {
    if (workload.status().message().empty()) Fail("workload error without a message");
    return 0;
  }
  for (const auto& job : workload->jobs) {
    for (uint64_t block : job.blocks) {
      if (block >= workload->replicas.size()) Fail("a job reads a block that was never placed");
    }
  }
  for (const auto& replicas : workload->replicas) {
    for (auto node : replicas) {
      if (node < 0 || node >= scenario->cluster.nodes) Fail("a replica on a node outside the cluster");
    }
  }
  return 0;
}
