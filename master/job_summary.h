// Sums over a job's task records (JobRecord's job-level figures): what
// `job show` and the history's header carry without the tasks themselves.
#pragma once

#include "proto/job.pb.h"

namespace mr::master {

// The job's filtering percentages (fp_raw, fp_wire) from `tasks`' maps, into `r`.
void SummarizeFp(const pb::JobRecord& tasks, pb::JobRecord* r);
void SummarizeFp(pb::JobRecord* r);
// Recomputes `r`'s job-level counters from the task records of `tasks`
// (the record itself, or the job's record when `r` is its header; a map
// that ran twice, because its output was lost, counts once: its last run).
void Summarize(const pb::JobRecord& tasks, pb::JobRecord* r);
void Summarize(pb::JobRecord* r);
// What a summary (JobIdRequest.summary) leaves out of a record.
void ClearTaskRecords(pb::JobRecord* r);
// What `job list` shows of a record: no task records, attempts or
// counters (`job show` has them); its FP summed if the record is older
// than the field. The history keeps it beside each finished job's record.
pb::JobRecord ListEntry(const pb::JobRecord& record);

}  // namespace mr::master
