// The built-in jobs, one JobInfo each, defined in the job's own file
// (kWordCountJob in wordcount.cc, ...) and listed by registry.cc.
// Internal to jobs/: everyone else finds jobs by name through job.h.
#pragma once

#include "jobs/job.h"

namespace mr::jobs {

extern const JobInfo kGrepJob;
extern const JobInfo kInvertedIndexJob;
extern const JobInfo kPermuJob;
extern const JobInfo kPluginJob;
extern const JobInfo kSequenceCountJob;
extern const JobInfo kSortJob;
extern const JobInfo kStreamingJob;
extern const JobInfo kWordCountJob;

}  // namespace mr::jobs
