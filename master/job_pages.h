// The job pages of the master's status server (docs/status-page.md): pure
// functions from job records to HTML and SVG, so a page shows exactly what
// `mrctl job list|show` would. status_http.cc calls them on the master's
// thread with records from JobTracker::List and JobTracker::Show.
#pragma once

#include <string>
#include <string_view>

#include "proto/job.pb.h"

namespace mr::master {

// /jobs: running jobs, then the history (newest first), with policy,
// locality rates, INT and FP. `jobs` as JobTracker::List gives them.
std::string JobsPage(const pb::JobListReply& jobs, std::string_view cluster_name);

// /job/ID: the job's spec and figures, one row per task (node, locality
// level, bytes, start and end relative to submission, phases), and the
// timeline (TimelineSvg) inline.
std::string JobPage(const pb::JobRecord& job, std::string_view cluster_name);

// The counters section of /job/ID: the job's sums and each task's status
// and counters (counter_pages.cc).
std::string CountersSection(const pb::JobRecord& job);

// /job/ID/timeline.svg: one row per worker, one <rect class="task"> per task
// with a recorded start and end (maps blue, reduces orange), x = seconds
// since submission. Tasks still running have no rect yet.
std::string TimelineSvg(const pb::JobRecord& job);

}  // namespace mr::master
