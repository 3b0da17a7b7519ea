// Plug-ins that misbehave, one per BAD_KIND (tests/CMakeLists.txt builds
// this file four times): no entry point, another API version, a segfault in
// Map, an endless loop in Map. plugin_integration_test runs each on a
// cluster: the attempt fails with one line and the worker keeps serving.
#include <csignal>
#include <memory>

#include "jobs/plugin.h"

namespace {

using namespace mr::jobs;

class Bad : public Job {
 public:
  void Map(std::string_view line, const LineInfo&, Emitter& out) override {
#if BAD_KIND == 3
    std::raise(SIGSEGV);
#elif BAD_KIND == 4
    for (;;) asm volatile("");  // spins; the asm keeps the loop from being optimized away
#endif
    out.Emit(line, "1");
  }
  void Reduce(std::string_view key, ValueStream&, Emitter& out) override { out.Emit(key, ""); }
};

const JobInfo kBad = {
    .name = "bad",
    .description = "misbehaves",
    .params = {},
    .code_hash = "",
    .make = []() -> std::unique_ptr<Job> { return std::make_unique<Bad>(); },
};

}  // namespace

#if BAD_KIND == 2  // built against "another" API version
extern "C" __attribute__((visibility("default"))) int mr_job_api_version() { return MR_JOB_API_VERSION + 1; }
extern "C" __attribute__((visibility("default"))) const JobInfo* mr_job_info() { return &kBad; }
#elif BAD_KIND != 1  // 1: no entry point at all
MR_JOB_PLUGIN(kBad)
#endif
