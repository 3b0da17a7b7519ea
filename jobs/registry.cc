// The registry of built-in jobs. Adding a job: define its JobInfo in its own
// file, declare it in all_jobs.h, list it here, and add the file to MR_JOBS
// in jobs/CMakeLists.txt.

#include <algorithm>

#include "jobs/all_jobs.h"

namespace mr::jobs {

const std::vector<const JobInfo*>& RegisteredJobs() {
  static const std::vector<const JobInfo*>* const jobs = [] {
    auto* v = new std::vector<const JobInfo*>{
        &kGrepJob, &kInvertedIndexJob, &kPermuJob, &kPluginJob, &kSequenceCountJob, &kSortJob, &kStreamingJob, &kWordCountJob,
    };
    std::sort(v->begin(), v->end(),
              [](const JobInfo* a, const JobInfo* b) { return a->name < b->name; });
    return v;
  }();
  return *jobs;
}

}  // namespace mr::jobs
