// The sort buffer's ordering (worker/record_sort.h) against std::sort with an
// independent comparator: (partition, key as std::string bytewise, arrival).
#include "worker/record_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace mr::worker::internal {
namespace {

// Keys laid out in one arena, entries pointing at them, as the buffer does.
struct Buffer {
  std::string arena;
  std::vector<SortEntry> entries;
  void Add(uint32_t partition, const std::string& key) {
    entries.push_back(SortEntry{KeyPrefix(key), arena.size(), static_cast<uint32_t>(key.size()), 1,
                                partition, static_cast<uint32_t>(entries.size())});
    arena += key;
    arena.push_back('v');  // a one-byte value after each key
  }
  std::string Key(const SortEntry& e) const { return arena.substr(e.offset, e.key_len); }
};

// The expected order, from std::sort on (partition, key, seq) as strings.
std::vector<uint32_t> Expected(const Buffer& b) {
  std::vector<SortEntry> copy = b.entries;
  std::sort(copy.begin(), copy.end(), [&b](const SortEntry& x, const SortEntry& y) {
    if (x.partition != y.partition) return x.partition < y.partition;
    const std::string kx = b.Key(x), ky = b.Key(y);  // compares as unsigned bytes
    if (kx != ky) return kx < ky;
    return x.seq < y.seq;
  });
  std::vector<uint32_t> seqs;
  for (const SortEntry& e : copy) seqs.push_back(e.seq);
  return seqs;
}

std::vector<uint32_t> Sorted(Buffer& b, uint32_t partitions) {
  SortEntries(b.entries, b.arena.data(), partitions);
  std::vector<uint32_t> seqs;
  for (const SortEntry& e : b.entries) seqs.push_back(e.seq);
  return seqs;
}

// Random binary keys drawn to collide: a few shared stems (so whole radix
// levels share a byte), lengths 0..20 around the 8-byte prefix, bytes from a
// small alphabet that includes 0 and 255, duplicates.
std::string RandomKey(std::mt19937_64& rng) {
  static const std::string kStems[] = {"", "a", "the the ", std::string("\0\0\0", 3),
                                       "abcdefgh", std::string("ab\0cd\0ef", 8), "\xff\xff"};
  static const char kBytes[] = {'\0', '\1', 'a', 'b', '\x7f', '\x80', '\xff'};
  std::string key = kStems[rng() % std::size(kStems)];
  const size_t extra = rng() % 13;
  for (size_t i = 0; i < extra; ++i) key.push_back(kBytes[rng() % std::size(kBytes)]);
  return key;
}

TEST(RecordSortTest, MatchesStdSortOnRandomBinaryKeys) {
  std::mt19937_64 rng(15);
  // Sizes below, at and far above the comparison-sort threshold.
  for (size_t n : {0, 1, 2, 47, 48, 49, 300, 5000, 100000}) {
    for (uint32_t partitions : {1u, 3u}) {
      Buffer b;
      for (size_t i = 0; i < n; ++i) b.Add(static_cast<uint32_t>(rng() % partitions), RandomKey(rng));
      const std::vector<uint32_t> want = Expected(b);
      EXPECT_EQ(Sorted(b, partitions), want) << "n=" << n << " partitions=" << partitions;
    }
  }
}

TEST(RecordSortTest, LongCommonStemsAndDuplicates) {
  // Ties past the 8-byte prefix: the radix goes on 8 key bytes at a time
  // (up to 64), then the comparison sort; duplicates keep arrival order.
  std::mt19937_64 rng(3);
  const std::string stem16 = "the the the the ", stem70(70, 'x');
  for (const std::string& stem : {stem16, stem70, stem70 + std::string(5, '\0')}) {
    Buffer b;
    for (int i = 0; i < 20000; ++i) {
      std::string key = stem.substr(0, rng() % (stem.size() + 1));
      if (rng() % 2) key += RandomKey(rng);
      b.Add(static_cast<uint32_t>(rng() % 2), key);
    }
    const std::vector<uint32_t> want = Expected(b);
    EXPECT_EQ(Sorted(b, 2), want) << testing::PrintToString(stem);
    for (const SortEntry& e : b.entries) ASSERT_EQ(e.prefix, KeyPrefix(b.Key(e)));  // put back
  }
}

TEST(RecordSortTest, KeysThatDifferOnlyInZeroPaddingOrLength) {
  // Same 8-byte prefix (zero padding included), told apart by the tail or length.
  Buffer b;
  const std::string keys[] = {"",
                              std::string(1, '\0'),
                              std::string(8, '\0'),
                              std::string(9, '\0'),
                              "ab",
                              std::string("ab\0", 3),
                              std::string("ab\0\0\0\0\0\0", 8),
                              std::string("ab\0\0\0\0\0\0\0", 9),
                              std::string("ab\0\0\0\0\0\0x", 9),
                              "abcdefgh",
                              "abcdefgh\x01",
                              "abcdefgh\xff",
                              "abcdefgi"};
  for (int copy = 0; copy < 10; ++copy) {  // enough to go through the radix levels
    for (int i = 12; i >= 0; --i) b.Add(0, keys[i]);
  }
  const std::vector<uint32_t> want = Expected(b);
  EXPECT_EQ(Sorted(b, 1), want);
  for (size_t i = 0; i + 1 < b.entries.size(); ++i) {
    EXPECT_LE(b.Key(b.entries[i]), b.Key(b.entries[i + 1]));
  }
}

TEST(RecordSortTest, EqualKeysKeepArrivalOrderAcrossPartitions) {
  Buffer b;
  for (int i = 0; i < 1000; ++i) b.Add(static_cast<uint32_t>(999 - i) % 4, "same key, long tail");
  Sorted(b, 4);
  for (size_t i = 0; i + 1 < b.entries.size(); ++i) {
    const SortEntry& x = b.entries[i];
    const SortEntry& y = b.entries[i + 1];
    ASSERT_TRUE(x.partition < y.partition || (x.partition == y.partition && x.seq < y.seq)) << i;
  }
}

TEST(RecordSortTest, PartitionHintSmallerThanThePartitionsIsStillCorrect) {
  std::mt19937_64 rng(7);
  Buffer b;
  for (int i = 0; i < 2000; ++i) b.Add(static_cast<uint32_t>(rng() % 9), RandomKey(rng));
  const std::vector<uint32_t> want = Expected(b);
  EXPECT_EQ(Sorted(b, 1), want);
}

TEST(RecordSortTest, KeyPrefixIsBigEndianZeroPadded) {
  EXPECT_EQ(KeyPrefix(""), 0u);
  EXPECT_EQ(KeyPrefix("a"), uint64_t{'a'} << 56);
  EXPECT_EQ(KeyPrefix("abcdefghij"), KeyPrefix("abcdefgh"));
  EXPECT_EQ(KeyPrefix(std::string("\xff", 1)), uint64_t{0xff} << 56);
}

// Every length the loads branch on (0-3 bytewise, 4-7 two overlapping loads,
// 8 and more one load), with distinct bytes, high ones included, against the
// number built byte by byte.
TEST(RecordSortTest, KeyPrefixOfEveryShortLengthMatchesTheBytes) {
  const std::string bytes = "\x01\x82\x03\xf4\x05\x86\x07\xf8\x09\x8a";
  for (size_t n = 0; n <= bytes.size(); ++n) {
    uint64_t want = 0;
    for (size_t i = 0; i < 8; ++i) {
      want = want << 8 | (i < n ? static_cast<unsigned char>(bytes[i]) : 0u);
    }
    EXPECT_EQ(KeyPrefix(std::string_view(bytes).substr(0, n)), want) << "length " << n;
  }
}

}  // namespace
}  // namespace mr::worker::internal
