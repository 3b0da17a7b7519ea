// SplitBlockReport (dfs/block_report.h).
#include "dfs/block_report.h"

#include <algorithm>

namespace mr::dfs {

namespace {

constexpr int64_t kMaxBlockRefBytes = 32;

// Takes the refs of `from` past the first `keep` out of it, in order,
// without copying them: the caller owns what it gets.
std::vector<pb::BlockRef*> TakeTail(google::protobuf::RepeatedPtrField<pb::BlockRef>* from, int keep) {
  std::vector<pb::BlockRef*> tail(static_cast<size_t>(from->size() - keep));
  from->ExtractSubrange(keep, from->size() - keep, tail.data());
  return tail;
}

}  // namespace

size_t BlockReportPartSize(int64_t max_frame_bytes) {
  return static_cast<size_t>(std::max<int64_t>(1, max_frame_bytes / 2 / kMaxBlockRefBytes));
}

std::vector<pb::BlockReportRequest> SplitBlockReport(pb::RegisterRequest* reg, size_t part_size) {
  const int part = static_cast<int>(std::min<size_t>(part_size, INT32_MAX));
  const int good_kept = std::min(part, reg->blocks_size());
  const int bad_kept = std::min(part - good_kept, reg->quarantined_blocks_size());
  // Handed over by pointer (AddAllocated): a report of 300,000 blocks is
  // not copied again.
  const std::vector<pb::BlockRef*> good = TakeTail(reg->mutable_blocks(), good_kept);
  const std::vector<pb::BlockRef*> bad = TakeTail(reg->mutable_quarantined_blocks(), bad_kept);
  std::vector<pb::BlockReportRequest> parts;
  size_t g = 0, q = 0;
  while (g < good.size() || q < bad.size()) {
    pb::BlockReportRequest& p = parts.emplace_back();
    p.set_worker_id(reg->worker().id());
    size_t room = static_cast<size_t>(part);
    for (; g < good.size() && room > 0; ++g, --room) p.mutable_blocks()->AddAllocated(good[g]);
    for (; q < bad.size() && room > 0; ++q, --room) p.mutable_quarantined_blocks()->AddAllocated(bad[q]);
  }
  if (!parts.empty()) {
    reg->set_report_continues(true);
    parts.back().set_last(true);
  }
  return parts;
}

}  // namespace mr::dfs
