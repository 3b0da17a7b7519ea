// How mrctl shows one job record: `job show` as text (PrintJob, and with
// --tasks its attempts), as JSON (JobJson, the field names docs/jobs.md
// documents), and the figures `job list` and `job wait` share. Called by
// mrctl_jobs.cc with records the master sent.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "common/job_figures.h"
#include "proto/job.pb.h"

namespace mr::tools {

// "fifo-delay(delay_ms=4500)": the policy and its parameters, in name order.
std::string PolicyText(const pb::JobRecord& r);
// A job's turnaround so far: its JTT once it ended; while it runs, the time
// since it was submitted (the master's clock at submission, this machine's
// now).
int64_t ElapsedMs(const pb::JobRecord& r, const master::JobFigures& f);
// The record as JSON; `with_tasks`: its task records and attempts too.
nlohmann::json JobJson(const pb::JobRecord& r, bool with_tasks);
// The record's summary lines (`job show`).
void PrintJob(const pb::JobRecord& r);
// The running attempts (progress, rate, backups) and the failed, killed
// and lost ones (node, error), one line each (`job show`; `--tasks` lists
// every ended one, without it the last few).
void PrintAttempts(const pb::JobRecord& r, bool all, std::FILE* out);
// `job show --why` (common/job_why.h): the critical path, the time lost by
// cause, the slowest worker and link; as text, and as JSON
// {"critical_path": [...], "time_lost": [...], "slowest": [...]}.
void PrintWhy(const pb::JobRecord& r, std::FILE* out);
nlohmann::json WhyJson(const pb::JobRecord& r);

}  // namespace mr::tools
