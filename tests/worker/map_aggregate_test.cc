// The count table of map-side aggregation (worker/map_aggregate.h) on its
// own: what ParseCount accepts, the order Sort() gives, 64-bit counts, the
// memory limit, both ways of looking a key up (with and without bytes
// readable past it) against a std::map. Through a MapOutputBuffer: map_output_test.cc (CountingTest).
#include "worker/map_aggregate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
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

// A key followed in memory by other bytes (what a word of a block of text
// is), for Increment(partition, key, readable_end, ...).
struct KeyInText {
  explicit KeyInText(const std::string& key, char after = '\xA5', size_t slack = 16)
      : text(key + std::string(slack, after)) {}
  std::string_view key(size_t n) const { return std::string_view(text).substr(0, n); }
  const char* end() const { return text.data() + text.size(); }
  std::string text;
};

// The one-load prefix of a key with bytes after it finds the same slot as
// KeyPrefix does for the key alone, whatever follows it (the mask keeps
// only the key's own bytes), at every length from 0 to past 16, and with
// fewer than 8 bytes readable (the end of the caller's buffer).
TEST(CountTableTest, LooksUpAKeyAlikeWithOrWithoutBytesReadablePastIt) {
  CountTable t(1 << 20);
  const std::string base = "abcdefghijklmnopqrst";
  for (size_t n = 0; n <= base.size(); ++n) {
    const std::string key = base.substr(0, n);
    uint64_t hash;
    ASSERT_FALSE(t.Increment(0, key, 1, &hash)) << n;
    ASSERT_TRUE(t.Insert(0, key, hash, 1));
    for (char after : {'\0', '\xFF', 'z', ' '}) {
      const KeyInText in(key, after);
      ASSERT_TRUE(t.Increment(CountTable::kAnyPartition, in.key(n), in.end(), 1, &hash))
          << "length " << n << " followed by " << int{after};
    }
    const KeyInText at_end(key, 'x', /*slack=*/0);  // nothing readable past the key
    ASSERT_TRUE(t.Increment(0, at_end.key(n), at_end.end(), 1, &hash)) << n;
  }
  t.Sort();
  ASSERT_EQ(t.size(), base.size() + 1);
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(t.entry(i).key, base.substr(0, i));  // "" < "a" < "ab" < ...
    EXPECT_EQ(t.entry(i).count, 6);
  }
}

// Many keys that share their first 8 bytes and their length, differing only
// past byte 8 or past 16 (a fixed stem, then a few bytes of two letters), so
// that most probes pass keys that only the bytes after the prefix tell
// apart; looked up both ways, in two partitions, through the table's growth
// from its first 1024 slots: every count and the order of Sort() equal a
// std::map's.
TEST(CountTableTest, CountsLikeAMapThroughGrowthAndCollisions) {
  std::mt19937 rng(29);
  const std::string letters("\0\xFF", 2);  // 0x00 before 0xFF, and like zero padding
  const std::vector<std::string> stems = {"", "abcdefgh", std::string(8, '\0'),
                                          "abcdefghijklmnop", "abcdefghijklmnopqrstuvwx"};
  std::vector<std::string> keys;
  for (int i = 0; i < 4000; ++i) {
    std::string k = stems[rng() % stems.size()];
    for (size_t n = rng() % 13; n > 0; --n) k += letters[rng() % 2];
    keys.push_back(k);
  }
  CountTable t(1 << 24);
  ASSERT_LT(t.memory_bytes(), 1024 * 32 + 1);  // starts small: it grows below
  std::map<std::pair<uint32_t, std::string>, uint64_t> want;
  for (int i = 0; i < 60000; ++i) {
    const std::string& k = keys[std::min(rng() % keys.size(), rng() % keys.size())];
    const uint32_t p = static_cast<uint32_t>(std::hash<std::string>()(k) % 2);
    const int64_t n = static_cast<int64_t>(rng() % 5);
    const KeyInText in(k, "\0\xFF" "a"[rng() % 3]);
    uint64_t hash;
    const bool found = rng() % 2 ? t.Increment(p, k, n, &hash)
                                 : t.Increment(CountTable::kAnyPartition, in.key(k.size()),
                                               in.end(), n, &hash);
    ASSERT_EQ(found, want.count({p, k}) == 1) << i;
    if (!found) {
      ASSERT_TRUE(t.Insert(p, k, hash, n));
    }
    want[{p, k}] += static_cast<uint64_t>(n);
  }
  ASSERT_GT(t.memory_bytes(), 1024 * 32);
  t.Sort();
  ASSERT_EQ(t.size(), want.size());
  size_t i = 0;
  for (const auto& [pk, count] : want) {  // std::string orders bytes as unsigned char
    const CountTable::Entry e = t.entry(i++);
    ASSERT_EQ(e.partition, pk.first);
    ASSERT_EQ(e.key, pk.second);
    ASSERT_EQ(static_cast<uint64_t>(e.count), count);
  }
}

}  // namespace
}  // namespace mr::worker
