// The framework's counter group and names (docs/logs-and-counters.md says
// what each counts). Part of the job API (jobs/counters.h, installed with
// the plug-in SDK) and read by the records' sums (common/job_counters.h),
// so it sits in the layer below both.
#pragma once

#include <cstddef>

namespace mr::jobs {

// The framework's group and counter names (Hadoop's TaskCounter and
// FileSystemCounter names where Hadoop has one; docs/logs-and-counters.md
// says what each counts).
inline constexpr char kFrameworkGroup[] = "framework";
inline constexpr char kMapInputRecords[] = "MAP_INPUT_RECORDS";
inline constexpr char kMapInputBytes[] = "MAP_INPUT_BYTES";
inline constexpr char kMapOutputRecords[] = "MAP_OUTPUT_RECORDS";
inline constexpr char kMapOutputBytes[] = "MAP_OUTPUT_BYTES";
inline constexpr char kCombineInputRecords[] = "COMBINE_INPUT_RECORDS";
inline constexpr char kCombineOutputRecords[] = "COMBINE_OUTPUT_RECORDS";
inline constexpr char kSpilledRecords[] = "SPILLED_RECORDS";
inline constexpr char kShuffleBytesLocal[] = "SHUFFLE_BYTES_LOCAL";
inline constexpr char kShuffleBytesDatacenter[] = "SHUFFLE_BYTES_DATACENTER";
inline constexpr char kShuffleBytesCrossDc[] = "SHUFFLE_BYTES_CROSS_DC";
inline constexpr char kReduceInputGroups[] = "REDUCE_INPUT_GROUPS";
inline constexpr char kReduceInputRecords[] = "REDUCE_INPUT_RECORDS";
inline constexpr char kReduceOutputRecords[] = "REDUCE_OUTPUT_RECORDS";
inline constexpr char kDfsBytesRead[] = "DFS_BYTES_READ";
inline constexpr char kDfsBytesWritten[] = "DFS_BYTES_WRITTEN";
inline constexpr char kCpuMilliseconds[] = "CPU_MILLISECONDS";
// Increments of new user counters a task dropped at its cap, and in a job's
// sum, user counters dropped at the job's cap (common/job_counters.h).
inline constexpr char kUserCountersDropped[] = "USER_COUNTERS_DROPPED";

}  // namespace mr::jobs
