// "Why did it take as long as it did?" — a pure function from a finished
// job's record to a short explanation (`mrctl job show --why`, the job page;
// docs/jobs.md, "Why it took this long"). Shared by the master and mrctl;
// it reads only what the record keeps: the accepted tasks' start, end,
// phases and bytes, the failed and killed attempts, the speculation figures.
//
// The model (Hadoop's, as Dean & Ghemawat §3.1 describe the phases):
//   1. The job's end is set by its last task: the last reduce (or, for a
//      map-only job, the last map).
//   2. A reduce cannot finish its copy phase before the last map's output
//      exists: the critical path is submission → the wait for a slot → the
//      last map → that reduce's fetch of the remaining output → its reduce
//      and write phases.
//   3. Time lost is named by cause: failed or lost attempts (retries), a
//      straggler (the critical map against the median map), backups killed
//      for losing their race (speculation), and the wait for a first slot.
//   4. The slowest worker is the one whose maps read at the lowest median
//      rate (bytes per second of their read phase, or run time), against the
//      median over all workers; the slowest link the locality level whose
//      maps read slowest.
// Times come from the workers' clocks (task start and end) and the master's
// (submission, end); a skew of a few ms shows as such.
#pragma once

#include <string>
#include <vector>

#include "proto/job.pb.h"

namespace mr::master {

struct WhyReport {
  // One sentence each, in the order above; empty for a job without task
  // timestamps (a record older than them).
  std::vector<std::string> critical_path;
  std::vector<std::string> time_lost;
  std::vector<std::string> slowest;
};

// Explains `job`'s turnaround from its record. A running job is explained
// as far as it got (its end is "now" = its last task's end).
WhyReport ExplainJob(const pb::JobRecord& job);

}  // namespace mr::master
