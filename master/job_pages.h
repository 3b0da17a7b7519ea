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

// Seconds between reloads of a page that shows something running.
inline constexpr int kRefreshSeconds = 3;

// /job/ID: the job's spec and figures; its running attempts (progress,
// rate, backups) and its failed, killed and lost attempts (node, error);
// once it ended, why it took as long as it did (job_why.h);
// one row per finished task (node, locality level, bytes, start and end
// relative to submission, phases); each attempt with a link to its log
// (TaskLogLink, log_pages.h), and the timeline (TimelineSvg) inline. While the job
// runs the page reloads itself and, with a `kill_token`, has a kill button
// (a form POSTing the token to /job/ID/kill; status_http.cc checks it).
std::string JobPage(const pb::JobRecord& job, std::string_view cluster_name,
                    std::string_view kill_token = "");

// The counters section of /job/ID: the job's sums and each task's status
// and counters (counter_pages.cc).
std::string CountersSection(const pb::JobRecord& job);

// /job/ID/timeline.svg: one row per worker, one <rect class="task"> per task
// with a recorded start and end (maps blue, reduces orange), x = seconds
// since submission. Tasks still running have no rect yet.
std::string TimelineSvg(const pb::JobRecord& job);

}  // namespace mr::master
