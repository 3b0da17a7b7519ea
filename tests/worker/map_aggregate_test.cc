// The count table of map-side aggregation (worker/map_aggregate.h) on its
// own: what ParseCount accepts, the order Sort() gives, 64-bit counts, the
// memory limit. Through a MapOutputBuffer: map_output_test.cc (CountingTest).
#include "worker/map_aggregate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace mr::worker {
namespace {

TEST(ParseCountTest, AcceptsWhatSumCountsAdds) {
  int64_t n = -1;
  EXPECT_TRUE(ParseCount("1", &n) && n == 1);
  EXPECT_TRUE(ParseCount("0", &n) && n == 0);
  EXPECT_TRUE(ParseCount("007", &n) && n == 7);
  EXPECT_TRUE(ParseCount("-12", &n) && n == -12);
  EXPECT_TRUE(ParseCount("9223372036854775807", &n) && n == INT64_MAX);
  EXPECT_TRUE(ParseCount("-9223372036854775808", &n) && n == INT64_MIN);
  for (std::string_view bad : {"", "+1", " 1", "1 ", "1.0", "x", "-", "0x10", "1e3",
                               "9223372036854775808", "99999999999999999999"}) {
    EXPECT_FALSE(ParseCount(bad, &n)) << bad;
  }
}

TEST(CountTableTest, SortsEntriesByPartitionThenKeyBytewise) {
  CountTable t(1 << 20);
  // Keys that share their first 8 bytes, zero padding and all.
  const std::vector<std::string> keys = {"abcdefgh",
                                         "abcdefghi",
                                         "abcdefgh" + std::string(1, '\0'),
                                         "abc",
                                         std::string("abc\0", 4),
                                         std::string("abc\0\0\0\0\0\0", 9),
                                         "",
                                         "\xF0",
                                         "abcdefgh\xF0zzzzzzzzzzzzzzzzz",
                                         "abcdefghazzzzzzzzzzzzzzzzz"};
  for (uint32_t p : {1u, 0u}) {
    for (const std::string& k : keys) {
      uint64_t hash;
      ASSERT_FALSE(t.Increment(p, k, 1, &hash));
      ASSERT_TRUE(t.Insert(p, k, hash, p + 1));
      ASSERT_TRUE(t.Increment(p, k, 10, &hash));
    }
  }
  uint64_t hash;
  EXPECT_TRUE(t.Increment(CountTable::kAnyPartition, "abc", 0, &hash));
  EXPECT_FALSE(t.Increment(2, "abc", 0, &hash));
  EXPECT_FALSE(t.Increment(0, "ab", 0, &hash));
  ASSERT_EQ(t.size(), 2 * keys.size());
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());  // std::string orders bytes as unsigned char
  t.Sort();
  for (size_t i = 0; i < t.size(); ++i) {
    const CountTable::Entry e = t.entry(i);
    EXPECT_EQ(e.partition, i < keys.size() ? 0u : 1u);
    EXPECT_EQ(e.key, sorted[i % keys.size()]) << i;
    EXPECT_EQ(e.count, e.partition + 11);
  }
  t.Clear();
  EXPECT_TRUE(t.empty());
  EXPECT_FALSE(t.Increment(0, "abc", 1, &hash));
}

// Counts are 64-bit modulo 2^64 whatever the slot keeps of them: past 2^32,
// negative, wrapping; short keys (held in the slot) and long ones alike,
// looked up in their partition and in kAnyPartition.
TEST(CountTableTest, CountsAddModulo2To64PastThirtyTwoBits) {
  CountTable t(1 << 20);
  const std::vector<int64_t> adds = {1, INT32_MAX, INT32_MAX, 5, -7, INT64_MAX, INT64_MAX, 3,
                                     INT64_MIN, -1, 1LL << 40, 42};
  uint64_t want = 0;
  for (int64_t n : adds) want += static_cast<uint64_t>(n);
  const std::vector<std::string> keys = {"a", "abcdefg", "abcdefgh", "a much longer key"};
  for (size_t k = 0; k < keys.size(); ++k) {
    const uint32_t p = static_cast<uint32_t>(k % 2);
    uint64_t hash;
    ASSERT_FALSE(t.Increment(p, keys[k], adds[0], &hash));
    ASSERT_TRUE(t.Insert(p, keys[k], hash, adds[0]));
    for (size_t i = 1; i < adds.size(); ++i) {
      ASSERT_TRUE(t.Increment(i % 2 ? p : CountTable::kAnyPartition, keys[k], adds[i], &hash));
    }
  }
  t.Sort();
  ASSERT_EQ(t.size(), keys.size());
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(static_cast<uint64_t>(t.entry(i).count), want) << t.entry(i).key;
  }
}

TEST(CountTableTest, RefusesANewKeyPastItsMemoryUnlessEmpty) {
  CountTable t(4096);
  uint64_t hash;
  int inserted = 0;
  for (;; ++inserted) {
    const std::string k = "key" + std::to_string(inserted);
    ASSERT_FALSE(t.Increment(0, k, 1, &hash));
    if (!t.Insert(0, k, hash, 1)) break;
    ASSERT_LE(t.memory_bytes(), 4096);
  }
  EXPECT_GT(inserted, 10);
  EXPECT_EQ(t.size(), static_cast<size_t>(inserted));
  t.Sort();
  t.Clear();
  const std::string big(10000, 'k');  // larger than the limit: an empty table takes it
  ASSERT_FALSE(t.Increment(0, big, 1, &hash));
  EXPECT_TRUE(t.Insert(0, big, hash, 1));
  EXPECT_TRUE(t.full());
}

}  // namespace
}  // namespace mr::worker
