// What a task attempt's user code sees around it, as Hadoop Streaming
// gives it (docs/user-jobs.md, "A task's directory and variables"):
//   - its own working directory, <task dir>/work, holding a symbolic link
//     to each file shipped with the job; made before the first command
//     starts and removed when the attempt ends;
//   - Hadoop's task variables in its environment.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "proto/job.pb.h"

namespace mr::worker {

// Hadoop's ids for our job and attempt. Hadoop's JobID is
// job_<jobtracker id>_<number, 4 digits>; ours puts the cluster's name
// (letters and digits only; "mr" when none are left) for the jobtracker id:
// job_local_0007, task_local_0007_m_000003, attempt_local_0007_m_000003_1.
std::string HadoopJobId(const std::string& cluster_name, int64_t job_id);
std::string HadoopTaskId(const std::string& cluster_name, const pb::TaskSpec& spec);
std::string HadoopAttemptId(const std::string& cluster_name, const pb::TaskSpec& spec);

// NAME=VALUE for the attempt: mapreduce_job_id, mapreduce_task_id,
// mapreduce_task_attempt_id, mapreduce_task_partition, mapreduce_task_ismap,
// and for a map mapreduce_map_input_file, _start and _length (its split).
std::vector<std::string> HadoopTaskVariables(const std::string& cluster_name, const pb::TaskSpec& spec);

// Makes `work_dir` (it must not exist) with a link to every file in
// `files_dir` ("" = no shipped files). IOError naming what failed.
Status MakeWorkDir(const std::string& work_dir, const std::string& files_dir);

}  // namespace mr::worker
