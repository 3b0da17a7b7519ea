// SplitBlockReport (dfs/block_report.h): a full block report in parts that
// each fit a frame, nothing lost, duplicated or reordered.
#include "dfs/block_report.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace mr::dfs {
namespace {

pb::RegisterRequest Report(int good, int quarantined) {
  pb::RegisterRequest reg;
  reg.mutable_worker()->set_id("w7");
  for (int i = 0; i < good; ++i) reg.add_blocks()->set_id(1000 + i);
  for (int i = 0; i < quarantined; ++i) reg.add_quarantined_blocks()->set_id(9000 + i);
  return reg;
}

// Every id of `reg` and `parts`, good then quarantined, in order.
std::pair<std::vector<uint64_t>, std::vector<uint64_t>> Ids(const pb::RegisterRequest& reg,
                                                            const std::vector<pb::BlockReportRequest>& parts) {
  std::vector<uint64_t> good, bad;
  for (const auto& b : reg.blocks()) good.push_back(b.id());
  for (const auto& b : reg.quarantined_blocks()) bad.push_back(b.id());
  for (const auto& p : parts) {
    for (const auto& b : p.blocks()) good.push_back(b.id());
    for (const auto& b : p.quarantined_blocks()) bad.push_back(b.id());
  }
  return {good, bad};
}

TEST(BlockReportTest, AReportThatFitsStaysWhole) {
  pb::RegisterRequest reg = Report(10, 2);
  EXPECT_TRUE(SplitBlockReport(&reg, 12).empty());
  EXPECT_FALSE(reg.report_continues());
  EXPECT_EQ(reg.blocks_size(), 10);
  EXPECT_EQ(reg.quarantined_blocks_size(), 2);
}

TEST(BlockReportTest, PartsCarryEveryBlockOnceInOrderTheLastMarked) {
  pb::RegisterRequest reg = Report(10, 5);
  const std::vector<uint64_t> good_before = Ids(reg, {}).first, bad_before = Ids(reg, {}).second;
  const std::vector<pb::BlockReportRequest> parts = SplitBlockReport(&reg, 4);
  ASSERT_EQ(parts.size(), 3u);  // 15 refs: 4 in the registration, then 4, 4, 3
  EXPECT_TRUE(reg.report_continues());
  EXPECT_EQ(reg.blocks_size(), 4);
  EXPECT_EQ(reg.quarantined_blocks_size(), 0);
  for (size_t i = 0; i < parts.size(); ++i) {
    EXPECT_EQ(parts[i].worker_id(), "w7");
    EXPECT_EQ(parts[i].last(), i + 1 == parts.size());
    EXPECT_LE(parts[i].blocks_size() + parts[i].quarantined_blocks_size(), 4);
  }
  // The part where the good ones end carries the first quarantined ones.
  EXPECT_EQ(parts[1].blocks_size(), 2);
  EXPECT_EQ(parts[1].quarantined_blocks_size(), 2);
  const auto [good, bad] = Ids(reg, parts);
  EXPECT_EQ(good, good_before);
  EXPECT_EQ(bad, bad_before);
}

TEST(BlockReportTest, OnlyQuarantinedOnesPastTheFirstPart) {
  pb::RegisterRequest reg = Report(0, 3);
  const auto parts = SplitBlockReport(&reg, 2);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(reg.quarantined_blocks_size(), 2);
  EXPECT_EQ(parts[0].quarantined_blocks_size(), 1);
  EXPECT_TRUE(parts[0].last());
}

// The worst case: every field of every ref at its longest encoding. Each
// part, and the registration's report, take at most half a frame.
TEST(BlockReportTest, WorstCasePartsFitHalfAFrame) {
  for (int64_t frame : {int64_t{196608}, int64_t{4} << 20}) {
    pb::RegisterRequest reg;
    reg.mutable_worker()->set_id("w1");
    const size_t part = BlockReportPartSize(frame);
    for (size_t i = 0; i < 2 * part + 7; ++i) {
      pb::BlockRef* b = reg.add_blocks();
      b->set_id(std::numeric_limits<uint64_t>::max() - i);
      b->set_bytes(-1);  // a negative int64 is a 10-byte varint
      b->set_byte_before(std::numeric_limits<uint32_t>::max());
    }
    const auto parts = SplitBlockReport(&reg, part);
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_LE(static_cast<int64_t>(reg.ByteSizeLong()), frame / 2) << frame;
    for (const auto& p : parts) EXPECT_LE(static_cast<int64_t>(p.ByteSizeLong()), frame / 2) << frame;
  }
  EXPECT_EQ(BlockReportPartSize(1), 1u);  // never zero
}

}  // namespace
}  // namespace mr::dfs
