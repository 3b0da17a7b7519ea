// Per-task lines and CSV for `mrctl job show ID --tasks [--csv]`, and CSV for
// `mrctl job list --csv` and `mrctl history --csv` (docs/jobs.md, "Task
// timestamps"): for people who plot with their own tools. Called by
// mrctl_jobs.cc with records the master sent.
#pragma once

#include <cstdio>

#include "proto/job.pb.h"

namespace mr::tools {

// One line per task: kind, index, node, locality, bytes in and out, start
// and end in seconds since the job's submission, attempts, phases.
void PrintTasks(const pb::JobRecord& job, std::FILE* out);
// The same as CSV with a header line; times in ms since submission, one
// column per phase (empty where a task has no such phase).
void PrintTasksCsv(const pb::JobRecord& job, std::FILE* out);
// One CSV row per job (the figures of `job list`, times in ms since the
// epoch).
void PrintJobsCsv(const pb::JobListReply& jobs, std::FILE* out);
// The filtering-percentage table as CSV.
void PrintFpCsv(const pb::HistoryReply& history, std::FILE* out);

}  // namespace mr::tools
