// Job plug-ins: a job written in C++ against jobs/job.h, built as a shared
// object against the installed SDK (docs/user-jobs.md, "Plug-ins"), run
// with `mrctl job run ./myjob.so -i IN -o OUT`.
//
// A plug-in defines its JobInfo as a built-in job does and names it once:
//
//     const mr::jobs::JobInfo kMyJob = {.name = "myjob", ..., .make = ...};
//     MR_JOB_PLUGIN(kMyJob)
//
// which defines the two entry points the runtime looks up after dlopen():
// mr_job_api_version() (the MR_JOB_API_VERSION the plug-in was compiled
// with; a different one is refused, since JobInfo's and Job's layout may
// differ) and mr_job_info(). The plug-in's code_hash field is ignored: the
// FP table keys a plug-in by the SHA-256 of its .so.
#pragma once

#include "jobs/job.h"

// Bumped whenever jobs/job.h or common/status.h change in a way that breaks
// a compiled plug-in. 2: JobEnv gained child_env, log and `counters` (Job::counters()).
#define MR_JOB_API_VERSION 2

#define MR_JOB_PLUGIN(info)                                                    \
  extern "C" __attribute__((visibility("default"))) int mr_job_api_version() { \
    return MR_JOB_API_VERSION;                                                 \
  }                                                                            \
  extern "C" __attribute__((visibility("default"))) const ::mr::jobs::JobInfo* \
  mr_job_info() {                                                              \
    return &(info);                                                            \
  }
