// Bounded fan-in for a reduce's merge (Hadoop's io.sort.factor).
//
// A reduce fetches one segment file per map. Merging them all at once opens
// one descriptor per map, so a job of more maps than the process may open
// files fails every reduce ("Too many open files"). MergeToFanIn merges
// groups of at most `fan_in` files into intermediate segment files on local
// disk until at most `fan_in` remain; the reduce then streams the final merge
// as before, in one pass. With no more files than `fan_in` nothing is
// written: the common case stays one pass.
//
// Pass sizes follow Hadoop's Merger (MergeQueue.getPassFactor): the first
// pass merges just enough files that every later pass merges exactly
// `fan_in` and the last leaves exactly `fan_in`, so each record is rewritten
// as few times as the fan-in allows. Groups are runs of adjacent files and a
// merged file takes its group's place, so the values of one key reach
// Reduce in the same order (by map index) as in a single-pass merge: the
// output does not depend on the fan-in.
//
// Thread-compatible.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "worker/map_output.h"

namespace mr::worker {

// Merges the segment files `files` (each one whole zstd segment, records in
// key order) down to at most `fan_in` files, writing intermediate files
// named `dir`/merge-N and unlinking every input it merged (inputs it did not
// merge are left). Returns the remaining files, in order. `cancelled` is
// asked between merges; when it says true the merge stops with Aborted.
// REQUIRES: fan_in >= 2. On failure the intermediate files written so far
// are removed; inputs already merged are gone (the attempt fails anyway).
Result<std::vector<std::string>> MergeToFanIn(std::vector<std::string> files, int fan_in,
                                              const std::string& dir,
                                              const std::function<bool()>& cancelled);

// Readers over the whole segment files `files`, in order: one open
// descriptor each. IOError when a file is gone.
Result<std::vector<std::unique_ptr<SegmentReader>>> OpenSegmentFiles(
    const std::vector<std::string>& files);

// The size of the next merge pass of `n` files at fan-in `fan_in`: 0 when
// n <= fan_in (no pass needed). Exposed for tests.
int MergePassSize(int n, int fan_in);

}  // namespace mr::worker
