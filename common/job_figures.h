// The figures the papers report for a job, derived from its record's
// counters (JoSS §6: Eqs. 9–11, reduce-data locality, INT, FP). Shared by the
// master (logs, the FP table) and mrctl (job show); pure computation.
#pragma once

#include <algorithm>
#include <cstdint>

#include "proto/job.pb.h"

namespace mr::master {

// The derived per-job figures (JoSS Eqs. 9–11 and §6's metrics), from a
// record's counters. Rates are 0 when there is nothing to divide by.
struct JobFigures {
  double vps_locality_rate = 0;        // node-local maps / maps
  double cen_locality_rate = 0;        // same datacenter, other node / maps
  double off_cen_rate = 0;             // 1 - the two above (Eq. 11)
  double reduce_data_locality_rate = 0;  // shuffle bytes from own datacenter / all
  double fp_raw = 0;                   // mean over maps of raw output / input bytes
  double fp_wire = 0;                  // mean over maps of shuffle bytes sent / input bytes
  // map input + shuffle + output + prefetch + the client's sample + the
  // retried attempts' bytes, across datacenters
  int64_t inter_dc_bytes = 0;
  int64_t jtt_ms = 0;                  // end - submit (0 while running)
};
JobFigures Figures(const pb::JobRecord& record);

// The accepted attempt of a task's record: its `attempt`, or in records
// older than that field attempts − 1.
template <typename Record>
int32_t AcceptedAttempt(const Record& r) {
  return r.has_attempt() ? r.attempt() : std::max(0, r.attempts() - 1);
}


// The mean over the record's maps of raw output / input and of wire output
// / input (JoSS §4), from its task records; maps that read nothing are left
// out. The JobTracker keeps them in the record's fp_raw and fp_wire, which
// Figures reads when present (a listed record carries no tasks).
void MapFilteringFigures(const pb::JobRecord& record, double* fp_raw, double* fp_wire);

}  // namespace mr::master
