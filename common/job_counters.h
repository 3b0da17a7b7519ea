// A task's and a job's counters as the master keeps them (docs/logs-and-
// counters.md, "Counters"): a task record holds its accepted attempt's
// counters, framework and user; the job record their sum over its task
// records — successful attempts only, as Hadoop's job counters.
//
// The framework counters that a TaskReport already carries as fields (map
// records and bytes, the Traffic of shuffle and input, output bytes and
// records) are derived from those fields here rather than counted again
// on the worker; the report's `counters` add the rest (combine, spill,
// reduce groups, CPU) and the user's.
#pragma once

#include <google/protobuf/repeated_ptr_field.h>

#include "proto/job.pb.h"

namespace mr::master {

using CounterList = google::protobuf::RepeatedPtrField<pb::Counter>;

// The counters of one successful attempt, sorted by (group, name): those
// derived from `r`'s fields (a map, or a reduce; `map_only`: the job has
// no reduces, so the map's output is the job's) and `r.counters()`.
CounterList TaskCounters(const pb::TaskReport& r, bool map_only);

// The sum of the counters of `record`'s task records, sorted by (group,
// name), into record->counters. At most kMaxJobUserCounters user counters,
// the first by (group, name); framework/USER_COUNTERS_DROPPED counts the
// others.
inline constexpr size_t kMaxJobUserCounters = 500;
void SumCounters(pb::JobRecord* record);
// The same sums over the task records of `tasks`, into `into` (a header of
// the same job, without task records of its own).
void SumCounters(const pb::JobRecord& tasks, pb::JobRecord* into);

// The value of (group, name) in `counters`, or 0.
int64_t CounterValue(const CounterList& counters, std::string_view group, std::string_view name);

// "NAME=value GROUP.NAME=value …" of the counters that are not 0 (a
// framework counter without its group), for one line per task in `mrctl
// job show --tasks` and on the job page. Not escaped.
std::string NonZeroCounters(const CounterList& counters);

}  // namespace mr::master
