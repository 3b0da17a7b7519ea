// SplitBlockReport (dfs/block_report.h).
#include "dfs/block_report.h"

#include <algorithm>
#include <utility>

namespace mr::dfs {

namespace {

constexpr int64_t kMaxBlockRefBytes = 32;

// Moves the refs of `from` past the first `keep` to `to`, in order.
void MoveTail(google::protobuf::RepeatedPtrField<pb::BlockRef>* from, int keep,
              std::vector<pb::BlockRef>* to) {
  for (int i = keep; i < from->size(); ++i) to->push_back(std::move(*from->Mutable(i)));
  from->DeleteSubrange(keep, from->size() - keep);
}

}  // namespace

size_t BlockReportPartSize(int64_t max_frame_bytes) {
  return static_cast<size_t>(std::max<int64_t>(1, max_frame_bytes / 2 / kMaxBlockRefBytes));
}

std::vector<pb::BlockReportRequest> SplitBlockReport(pb::RegisterRequest* reg, size_t part_size) {
  const int part = static_cast<int>(std::min<size_t>(part_size, INT32_MAX));
  const int good_kept = std::min(part, reg->blocks_size());
  const int bad_kept = std::min(part - good_kept, reg->quarantined_blocks_size());
  std::vector<pb::BlockRef> good, bad;
  MoveTail(reg->mutable_blocks(), good_kept, &good);
  MoveTail(reg->mutable_quarantined_blocks(), bad_kept, &bad);
  std::vector<pb::BlockReportRequest> parts;
  size_t g = 0, q = 0;
  while (g < good.size() || q < bad.size()) {
    pb::BlockReportRequest& p = parts.emplace_back();
    p.set_worker_id(reg->worker().id());
    size_t room = static_cast<size_t>(part);
    for (; g < good.size() && room > 0; ++g, --room) *p.add_blocks() = std::move(good[g]);
    for (; q < bad.size() && room > 0; ++q, --room) *p.add_quarantined_blocks() = std::move(bad[q]);
  }
  if (!parts.empty()) {
    reg->set_report_continues(true);
    parts.back().set_last(true);
  }
  return parts;
}

}  // namespace mr::dfs
