// The ordering of a map task's sort buffer: its index entries by
// (partition, key bytewise, arrival), without touching the arena for most
// decisions. Internal to worker/map_output.cc; its own file so it can be
// tested and measured alone (tests/worker/record_sort_test.cc).
//
// The sort is an in-place MSD radix sort (American flag sort, McIlroy,
// Bostic and McIlroy 1993) on the partition and then on the 8-byte
// big-endian key prefix every entry carries, one byte per level. A bucket
// still tied after those 8 bytes loads the next 8 key bytes into its
// entries' prefix and goes on (up to kMaxRadixBytes = 64 key bytes; the
// first 8 are put back afterwards). A bucket of fewer than kSmallBucket
// entries, or still tied at the end, is finished by a comparison sort with
// the full order (the key's bytes after the prefix, then its length, then
// arrival). The result is
// exactly the order of std::sort with CompareEntries: the order is total
// (arrival numbers are distinct), so there is one sorted order to reach.
//
// Cost: one counting pass and one permutation pass over the entries per
// radix level; a level whose entries all share the byte costs the counting
// pass alone; loading the next 8 key bytes reads the arena once. No memory
// beyond 256 counters per level of recursion (at most 64 levels).
//
// Thread-compatible; pure functions over the caller's memory.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace mr::worker::internal {

// One buffered record: key at arena[offset], value right after it. `prefix`
// holds the key's first 8 bytes big-endian (zero-padded, see KeyPrefix);
// `seq` (arrival order) breaks ties and must be distinct within one sort.
struct SortEntry {
  uint64_t prefix;
  uint64_t offset;
  uint32_t key_len;
  uint32_t value_len;
  uint32_t partition;
  uint32_t seq;
};
static_assert(sizeof(SortEntry) == 32);

// 8 bytes at p in the machine's order, and 4 bytes at p big-endian.
inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t LoadBigEndian32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return std::endian::native == std::endian::little ? __builtin_bswap32(v) : v;
}

// The first 8 bytes of `key` as a big-endian number, zero-padded on the
// right: bytewise order of the first 8 bytes is numeric order. Inline, with
// branchy loads rather than a memcpy of a variable length (a libc call per
// key): the map side takes it once per record (map_output.cc's index, the
// count table of map_aggregate.cc).
[[gnu::always_inline]] inline uint64_t KeyPrefix(std::string_view key) {
  const char* p = key.data();
  const size_t n = key.size();
  if (n >= 8) {
    const uint64_t v = Load64(p);
    return std::endian::native == std::endian::little ? __builtin_bswap64(v) : v;
  }
  if (n >= 4) {  // two overlapping 4-byte loads
    return uint64_t{LoadBigEndian32(p)} << 32 | uint64_t{LoadBigEndian32(p + n - 4)}
                                                    << (64 - 8 * n);
  }
  if (n == 0) return 0;
  const auto byte = [&](size_t i) { return uint64_t{static_cast<unsigned char>(p[i])}; };
  return byte(0) << 56 | byte(n / 2) << (56 - 8 * (n / 2)) | byte(n - 1) << (64 - 8 * n);
}

// True when a orders before b: by partition, key bytewise (a proper prefix
// first), then seq. `arena` holds the keys.
bool EntryLess(const SortEntry& a, const SortEntry& b, const char* arena);

// Sorts `entries` by EntryLess. `partitions`: one more than the largest
// partition number in entries (a hint for the first level; any value ≥ 1
// is correct). Uses the comparison sort alone below kSmallBucket entries.
void SortEntries(std::span<SortEntry> entries, const char* arena, uint32_t partitions);

// Buckets smaller than this are finished by the comparison sort.
inline constexpr size_t kSmallBucket = 48;

}  // namespace mr::worker::internal
