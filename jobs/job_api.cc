// Job's out-of-line defaults (Partition, WriteOutput, DroppedCounters): the part of the job
// API that a job's own code links with. With common/status.cc it is the
// `mr_job_api` library of the plug-in SDK (docs/user-jobs.md), so it needs
// nothing else: XXH3 is compiled in from the header.
#include "jobs/job.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace mr::jobs {

int Job::Partition(std::string_view key, int reducers) const {
  return static_cast<int>(XXH3_64bits(key.data(), key.size()) % static_cast<uint64_t>(reducers));
}

namespace {

class Dropped final : public Counters {
 public:
  void Increment(std::string_view, std::string_view, int64_t) override {}
  void SetStatus(std::string_view) override {}
};

}  // namespace

Counters& DroppedCounters() {
  static Dropped dropped;
  return dropped;
}

void Job::WriteOutput(std::string_view key, std::string_view value, std::string* out) const {
  out->append(key);
  out->push_back('\t');
  out->append(value);
  out->push_back('\n');
}

}  // namespace mr::jobs
