// Task runner: the pure, local core of a worker's map and reduce tasks, with
// no networking and no clock. The worker calls it from a task thread, feeding
// a map task DFS reads (a ReadFn) and a reduce task the segments it fetched;
// it times the calls itself. Its output equals jobs::RunLocal's (the oracle)
// byte for byte for the same splits, parameters and reducers.
//
// A map task (RunMapTask), in order:
//  1. MakeJob(job, params): a fresh, configured instance.
//  2. A LineReader over [split_offset, split_offset + split_length) of the
//     file with job->lookahead_lines(); Map(line, {file, offset, in_split})
//     per line, then FinishMap.
//  3. reducers >= 1: each emitted pair goes to partition Partition(key,
//     reducers) of a MapOutputBuffer (the job's Combine as its combiner when
//     has_combiner(); counting in a hash table when combiner_kind() is
//     kSumCounts and spec.aggregate_counts), whose Finish() writes
//     work_dir/map-output: one zstd segment per partition, described by the
//     returned index.
//     reducers == 0 (map-only): each pair goes, in emission order, uncombined,
//     through WriteOutput into work_dir/map-output.txt, which is the task's
//     final output (RunLocal's part-m-NNNNN); the index then has no segments.
//
// A reduce task (RunReduceTask): MakeJob; a MergingReader over segment
// `index` of every map output; Reduce per key in bytewise order (values of a
// key in input order, then in map emission order: RunLocal's stable sort);
// FinishReduce; WriteOutput's text handed to `write` in chunks of about
// kWriteChunkBytes (the last may be shorter; no chunk is empty).
//
// Thread-safe: the functions share no state; each call uses its own job
// instance and files.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "jobs/job.h"
#include "jobs/line_reader.h"
#include "worker/map_output.h"

namespace mr::worker {

struct MapTaskSpec {
  std::string job;      // registered job name
  jobs::Params params;  // resolved, including what Plan() added
  jobs::JobEnv env;     // for jobs that run user commands (streaming)
  int reducers = 1;     // 0 = map-only job
  std::string file;     // DFS path of the input file (LineInfo::file)
  int64_t file_length = 0;
  int64_t split_offset = 0;
  int64_t split_length = 0;
  // The file's byte at split_offset - 1, when known (the DFS records it for
  // every block after the first: BlockRef.byte_before): the task then reads
  // nothing before its split. -1: unknown, the task reads that byte.
  // Default: -1.
  int byte_before = -1;
  // Memory for buffered map output before a spill. Default: 128 MiB
  // (config.h JobOptions::sort_buffer_bytes).
  int64_t sort_buffer_bytes = 128 << 20;
  // zstd level of the map output and its runs (1-19), or 0: zstd frames of
  // stored blocks, not compressed (checksummed; any zstd decoder reads
  // them), as Hadoop leaves map output by default
  // (mapreduce.map.output.compress). A reduce in another datacenter gets it
  // compressed at cluster.inter_dc_zstd_level all the same. Storing cut a
  // 1 GiB Sort's workers from 19.6 to 15.0 CPU-s on one machine
  // (docs/benchmarks.md, "Grep and Sort, issue 29 item 4"). Default: 0.
  int map_output_zstd_level = 0;
  // A job whose combiner sums counts (jobs::CombinerKind::kSumCounts) counts
  // in a hash table (MapOutputOptions::sum_counts). false sorts and combines
  // every pair instead: the same output, slower; for tests and benchmarks.
  // Default: true.
  bool aggregate_counts = true;
  // An existing local directory owned by this task: the output file and any
  // spill files go here. Default: none (required).
  std::string work_dir;
  // Called on the task's thread before each read of input (about every MiB)
  // with MapOutputBuffer::partition_bytes_so_far(): the estimate the worker
  // reports while the map runs. Not called for map-only jobs. Default: none.
  std::function<void(const std::vector<int64_t>& partition_bytes)> progress;
  // Called on the task's thread once every line of the split went through
  // Map and FinishMap, before the final sort, combine and spill (Finish);
  // the worker times its phases by it (docs/jobs.md, "Task timestamps").
  // Not called for map-only jobs. Default: none.
  std::function<void()> map_done;
};

struct MapTaskResult {
  // Where each partition's segment is in output_path; no segments when
  // map-only.
  MapOutputIndex index;
  // work_dir/map-output (segments) or work_dir/map-output.txt (map-only).
  std::string output_path;
  // Bytes of the lines that start in the split, each with its terminator
  // ('\n', "\r\n" or '\r'; none for a last line without one), so the
  // last line counts up to its end past the split; lookahead lines are not
  // counted. Over any partition of a file into splits these sum to its size.
  int64_t input_bytes = 0;
  // Lines that start in the split (Map calls with in_split, no lookahead).
  int64_t records_in = 0;
  // Serialized key+value bytes emitted by Map and FinishMap, before the
  // combiner (JoSS' raw filter-percentage numerator).
  int64_t raw_output_bytes = 0;
  int64_t records_out = 0;  // pairs emitted by Map and FinishMap
  // Counters (docs/logs-and-counters.md): records into and out of the
  // combiner, at every spill and merge (with in-mapper counting, pairs
  // counted and keys written out of the table); records written to local
  // disk, runs and output (MapOutputIndex::spilled_records). 0 when map-only.
  int64_t combine_records_in = 0;
  int64_t combine_records_out = 0;
  int64_t spilled_records = 0;
};

// Runs one map task. `read` reads bytes of spec.file (see LineReader::ReadFn).
// Errors: InvalidArgument for an unknown job, a bad parameter or spec
// (negative reducers or split, missing work_dir); IOError from `read` or the
// local disk; Internal when Partition() returns an out-of-range partition or
// the job throws. On error no output file is left behind.
Result<MapTaskResult> RunMapTask(const MapTaskSpec& spec, const jobs::LineReader::ReadFn& read);

struct ReduceTaskSpec {
  std::string job;
  jobs::Params params;  // resolved, as for the map tasks
  int index = 0;        // this reduce task's partition, 0 <= index < reducers
  int reducers = 1;
  jobs::JobEnv env;     // for jobs that run user commands (streaming)
};

struct ReduceTaskResult {
  int64_t input_records = 0;    // records read from all segments
  int64_t input_groups = 0;     // keys, i.e. Reduce calls
  int64_t input_raw_bytes = 0;  // their serialized key+value bytes
  int64_t output_records = 0;   // pairs emitted by Reduce and FinishReduce
  int64_t output_bytes = 0;     // bytes handed to `write`
};

// Chunk size RunReduceTask hands to `write`.
inline constexpr int64_t kWriteChunkBytes = 1 << 20;

// Runs one reduce task over `inputs` (segment spec.index of each map output,
// in map order; ownership passes to the task). Every byte of output goes
// through `write`, in order; an error from `write` stops the task and is
// returned. No inputs is not an error (FinishReduce may still write).
// Errors: InvalidArgument for a bad job, parameter or index; Corruption from a
// malformed segment; whatever `write` returns; Internal if the job throws.
Result<ReduceTaskResult> RunReduceTask(const ReduceTaskSpec& spec,
                                       std::vector<std::unique_ptr<SegmentReader>> inputs,
                                       const std::function<Status(std::string_view chunk)>& write);

}  // namespace mr::worker
