// RunLocal: a whole job in one process, in memory, on local files: the
// oracle that cluster output is compared with (MIT 6.5840's mrsequential),
// and the engine of `mr-local`. Simple on purpose; not for inputs larger
// than memory.
//
// What it does, in order:
//  1. Inputs: each path is a file, or a directory meaning its regular files
//     sorted by name (not recursive; names starting with '.' or '_' are
//     skipped). Each file is cut into splits of split_bytes (an empty file
//     has none); each split is one map task, in input order. A compressed
//     file (".gz", ".zst", ".bz2": jobs/codec.h) is one split, whose lines
//     are those of its decompressed bytes.
//  2. Plan (when reducers >= 1): the job's Plan() gets the first lines of
//     the splits (about 2000 in all, spread over the splits) and may add
//     parameters for every task.
//  3. Map tasks: a fresh configured Job per task reads its split with a
//     LineReader (plus lookahead_lines()), calls Map per line and FinishMap.
//     With a combiner, the task's output is sorted by key and combined.
//     Each pair goes to partition Partition(key, reducers).
//  4. Reduce tasks r = 0..reducers-1: a fresh Job per task; the partition's
//     pairs, stable-sorted by key (bytewise), are grouped by key for
//     Reduce, then FinishReduce; WriteOutput formats out_dir/part-NNNNN
//     (r in 5 digits). Every reducer writes its file, even if empty.
//     reducers == 0 is a map-only job: task m's Map output, unsorted and
//     not combined, goes through WriteOutput into out_dir/part-m-NNNNN.
//
// Thread-compatible; single-threaded.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "jobs/job.h"

namespace mr::jobs {

struct LocalRunOptions {
  // Number of reduce tasks and part files; 0 for a map-only job.
  // Default: 1.
  int reducers = 1;
  // Bytes of input per map task (a DFS block's worth). Default: 64 MiB.
  int64_t split_bytes = 64 << 20;
  // The job's parameters (--param k=v). Default: none.
  Params params;
  // Where user commands run (streaming: the shipped files' directory).
  // Default: the current directory, no time limit.
  JobEnv env;
};

// Runs `job` over `inputs` and writes its part files into `out_dir`, which
// is created and must not exist. On success every part file is complete.
// Errors: InvalidArgument for an unknown job, a bad parameter or option;
// NotFound naming a missing input; AlreadyExists when out_dir exists;
// IOError for a read or write failure; Aborted when a user command (a
// streaming mapper or reducer) fails, with its one-line reason. On error
// out_dir may hold part files.
Status RunLocal(std::string_view job, const std::vector<std::string>& inputs,
                const std::string& out_dir, const LocalRunOptions& options);

}  // namespace mr::jobs
