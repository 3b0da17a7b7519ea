// A worker's full block report in parts that each fit a frame
// (cluster.Register, then cluster.BlockReport: docs/wire-format.md).
//
// A BlockRef is at most ~30 bytes encoded (two 10-byte varints, a 5-byte
// one, tags and a length), 10–14 typically. One frame of the default 4 MiB
// held the whole report up to ~290,000 blocks; past that a worker could
// never register. HDFS splits its report the same way, by storage, past
// dfs.blockreport.split.threshold blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proto/cluster.pb.h"

namespace mr::dfs {

// Block references per part for frames of at most `max_frame_bytes`: half
// a frame's worth at the worst-case size, so the registration's other
// fields (held map outputs) have the other half.
size_t BlockReportPartSize(int64_t max_frame_bytes);

// Leaves the first `part_size` references of `reg`'s report (good ones
// first, then quarantined ones) in `reg` and moves the rest into the parts
// returned, in order; sets reg->report_continues() and the last part's
// last() when there are any.
std::vector<pb::BlockReportRequest> SplitBlockReport(pb::RegisterRequest* reg, size_t part_size);

}  // namespace mr::dfs
