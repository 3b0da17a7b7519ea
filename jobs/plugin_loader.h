// Loading a job plug-in (jobs/plugin.h) into this process: for mr-local and
// mr-task only (a plug-in's code must never run in mr-worker, mr-master or
// mrctl: `mrctl job run` asks `mr-task --describe` instead).
#pragma once

#include <string>

#include "common/status.h"
#include "jobs/job.h"

namespace mr::jobs {

// dlopen()s the plug-in at `path` and returns its JobInfo. The handle is
// never closed: a job's objects may outlive any one task. InvalidArgument
// naming `name` (the file's base name) when it cannot be loaded, lacks the
// entry points, was built for another MR_JOB_API_VERSION or makes no job.
Result<const JobInfo*> LoadPlugin(const std::string& path, const std::string& name);

}  // namespace mr::jobs
