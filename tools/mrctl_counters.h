// Counters in `mrctl job show` (docs/logs-and-counters.md, "Counters"): the
// job's sums grouped as Hadoop prints them, each task's with --tasks, and
// both in --json. Called by mrctl_jobs.cc with the record the master sent.
#pragma once

#include <cstdio>

#include <google/protobuf/repeated_ptr_field.h>
#include <nlohmann/json.hpp>

#include "proto/job.pb.h"

namespace mr::tools {

// {"GROUP": {"NAME": value, ...}, ...}.
nlohmann::json CountersJson(const google::protobuf::RepeatedPtrField<pb::Counter>& counters);
// "  counters (successful attempts):" then a line per group, its counters
// one per line. Nothing when the job has none yet.
void PrintCounters(const pb::JobRecord& job, std::FILE* out);
// "  counters per task ...:" then a line per finished task, indented by 4:
// its status message, if any, and its counters that are not 0.
void PrintTaskCounters(const pb::JobRecord& job, std::FILE* out);

}  // namespace mr::tools
