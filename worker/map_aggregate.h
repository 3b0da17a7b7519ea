// Map-side aggregation: the count table a MapOutputBuffer keeps instead of
// its sort buffer when its combiner sums decimal counts
// (MapOutputOptions::sum_counts, from jobs::CombinerKind::kSumCounts). This
// is in-mapper combining (Lin & Dyer, "Data-Intensive Text Processing with
// MapReduce", 2010, §3.1), as in Spark's map-side combine, bounded in memory
// like the sort buffer it replaces. Internal to worker/: map_output.cc is its
// only user; the format it spills is docs/map-output-format.md's.
//
// Design:
//  1. One open-addressing table (linear probing, a power of two of slots, at
//     most 3/4 full) of 32-byte slots: partition, count, and the key's
//     length, arena offset and first 8 bytes big-endian. Keys are copied
//     once into an arena. A key of at most 8 bytes is compared without
//     touching the arena.
//  2. Slots are found by a hash of the key alone, so a caller that
//     partitions by key can look a key up in whichever partition holds it
//     (kAnyPartition) and compute its partition only when the key is new.
//     The lookup is inline (a counting map calls it once per word), and a
//     caller whose key lies in a larger buffer says where the buffer ends,
//     so the key's first 8 bytes are one load and a mask (PaddedKeyPrefix)
//     rather than loads picked by the key's length, a branch that words of
//     random lengths mispredict (docs/benchmarks.md, "The count table's
//     lookup").
//  3. Memory is the slots plus the arena's bytes. A new key that would take
//     it past the limit (growing the table included) is refused while the
//     table is not empty: the caller spills (Sort, entry, Clear) and inserts
//     again.
//  4. Sort() moves the used slots to the front and sorts them in place by
//     (partition, key bytewise): a spill needs no memory beyond the table.
// Counts add modulo 2^64, as jobs::SumCounts does.
//
// Thread-compatible.
#pragma once

#include <bit>
#include <cassert>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "worker/record_sort.h"

namespace mr::worker {

// Parses `value` as a count: what jobs::SumCounts adds, i.e. what
// std::from_chars reads as an int64 using every byte (an optional '-', then
// decimal digits, in range). False for anything else ("", "+1", " 1", "1.0",
// "99999999999999999999").
inline bool ParseCount(std::string_view value, int64_t* n) {
  if (value.size() == 1 && value[0] >= '0' && value[0] <= '9') {  // "1": nearly always
    *n = value[0] - '0';
    return true;
  }
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, *n);
  return ec == std::errc() && ptr == end;
}

class CountTable {
 public:
  // Increment's partition meaning "whichever partition holds the key".
  static constexpr uint32_t kAnyPartition = UINT32_MAX;

  // REQUIRES: memory_limit >= 1.
  explicit CountTable(int64_t memory_limit);

  // Adds n to the count of `key` in `partition` (kAnyPartition: in the one
  // partition that holds it; REQUIRES then that the caller keeps one
  // partition per key) and returns true. Returns false when the table lacks
  // the key, with *hash set for Insert. Inline: the hot path of a counting
  // map calls it once per word.
  bool Increment(uint32_t partition, std::string_view key, int64_t n, uint64_t* hash) noexcept {
    return Probe(partition, key, internal::KeyPrefix(key), n, hash);
  }

  // Increment for a key whose memory goes on past it: `readable_end` is where
  // the caller's buffer ends (REQUIRES key.data() + key.size() <=
  // readable_end). With 8 bytes readable from key.data(), the key's first 8
  // bytes are one load and a mask instead of KeyPrefix's loads chosen by the
  // key's length, a branch that words of random lengths mispredict.
  [[gnu::always_inline]] bool Increment(uint32_t partition, std::string_view key,
                                        const char* readable_end, int64_t n,
                                        uint64_t* hash) noexcept {
    const uint64_t prefix = readable_end - key.data() >= 8 ? PaddedKeyPrefix(key)
                                                           : internal::KeyPrefix(key);
    return Probe(partition, key, prefix, n, hash);
  }

  // Adds (partition, key) with count n and returns true. Returns false,
  // changing nothing, when the table is not empty and the key would take
  // memory_bytes() past the limit: spill and Clear() first. An empty table
  // takes any key (a key larger than the limit is spilled alone).
  // REQUIRES: Increment(partition, key, ...) just returned false and set
  // `hash`; partition < kAnyPartition.
  bool Insert(uint32_t partition, std::string_view key, uint64_t hash, int64_t n);

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // Slots plus key bytes.
  int64_t memory_bytes() const;
  // memory_bytes() has reached the limit: time to spill.
  bool full() const { return memory_bytes() >= limit_; }

  // One (partition, key, count), as entry() gives them after Sort().
  struct Entry {
    uint32_t partition;
    std::string_view key;  // valid until Clear()
    int64_t count;
  };
  // Orders the entries by (partition, key bytewise) for entry(). Afterwards
  // only size(), entry() and Clear() may be called.
  void Sort();
  // REQUIRES: Sort() was called; i < size().
  Entry entry(size_t i) const;

  // Empties the table. Keeps the slots; gives back an arena that a key larger
  // than the limit grew.
  void Clear();

 private:
  struct Slot {
    uint64_t prefix;  // the key's first 8 bytes, big-endian, zero-padded
    uint64_t count;   // adds wrap modulo 2^64
    uint64_t offset;  // of the key in arena_
    uint32_t key_len;
    uint32_t partition;  // kFree: an unused slot
  };
  static_assert(sizeof(Slot) == 32);
  static constexpr uint32_t kFree = UINT32_MAX;

  std::string_view Key(const Slot& s) const { return {arena_.data() + s.offset, s.key_len}; }
  void Grow();

  // KeyPrefix(key) from one 8-byte load. REQUIRES: 8 bytes readable at key.data().
  static uint64_t PaddedKeyPrefix(std::string_view key) {
    const uint64_t v = std::endian::native == std::endian::little
                           ? __builtin_bswap64(internal::Load64(key.data()))
                           : internal::Load64(key.data());
    // The first min(n, 8) bytes: a shift by 64 is undefined, so n = 0 is masked apart.
    const size_t n = key.size();
    const uint64_t keep = n >= 8 ? ~uint64_t{0} : n == 0 ? 0 : ~uint64_t{0} << (64 - 8 * n);
    return v & keep;
  }

  // Increment's lookup of `key`, whose KeyPrefix is `prefix`.
  [[gnu::always_inline]] bool Probe(uint32_t partition, std::string_view key, uint64_t prefix,
                                    int64_t n, uint64_t* hash) noexcept {
    assert(!sorted_);
    const uint64_t h = HashKey(key, prefix);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.partition == kFree) break;
      if (s.prefix != prefix || s.key_len != key.size()) continue;
      if (partition != kAnyPartition && s.partition != partition) continue;
      // Equal lengths and first 8 bytes: keys of up to 8 bytes are equal.
      if (key.size() > 8 && !TailsEqual(arena_.data() + s.offset, key.data(), key.size())) continue;
      s.count += static_cast<uint64_t>(n);
      return true;
    }
    *hash = h;
    return false;
  }

  // murmur3's 64-bit finalizer: every input bit affects every output bit.
  static uint64_t Fmix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
  }
  // The table's hash of a key with the given prefix. Keys of up to 16 bytes
  // (nearly every word) are mixed inline from two loads; longer ones go to
  // XXH3-64 (a call).
  static uint64_t HashKey(std::string_view key, uint64_t prefix) {
    constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;
    const size_t n = key.size();
    if (n <= 8) return Fmix64(prefix ^ (n * kGolden));
    if (n <= 16) {
      return Fmix64(prefix ^ Fmix64(internal::Load64(key.data() + n - 8) ^ (n * kGolden)));
    }
    return HashLongKey(key);
  }
  static uint64_t HashLongKey(std::string_view key);
  // Whether bytes [8, n) of a and b are equal. REQUIRES: n > 8.
  static bool TailsEqual(const char* a, const char* b, size_t n) {
    size_t i = 8;
    for (; i + 8 <= n; i += 8) {
      if (internal::Load64(a + i) != internal::Load64(b + i)) return false;
    }
    return i == n || internal::Load64(a + n - 8) == internal::Load64(b + n - 8);
  }

  const int64_t limit_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;  // slots_.size() - 1
  size_t size_ = 0;  // used slots
  std::string arena_;
  bool sorted_ = false;
};

}  // namespace mr::worker
