// The sort buffer's ordering: an MSD radix sort on (partition, key prefix),
// finished by a comparison sort. See record_sort.h.
#include "worker/record_sort.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "worker/segment_io.h"

namespace mr::worker::internal {
namespace {

std::string_view KeyTail(const SortEntry& e, const char* arena) {  // the key after its prefix
  return e.key_len <= 8 ? std::string_view() : std::string_view(arena + e.offset + 8, e.key_len - 8);
}

// The comparison sort that finishes a bucket.
void FinishBucket(SortEntry* first, SortEntry* last, const char* arena) {
  std::sort(first, last,
            [arena](const SortEntry& a, const SortEntry& b) { return EntryLess(a, b, arena); });
}

// Permutes [first, first + n) in place so that entries are grouped by
// digit(e) in increasing order; `counts[d]` is how many have digit d (d <
// counts.size()). On return `ends[d]` is one past bucket d's last entry.
// American flag sort's permutation: each entry moves at most once.
template <typename Digit>
void Permute(SortEntry* first, size_t buckets, const size_t* counts, size_t* next, size_t* ends,
             const Digit& digit) {
  size_t at = 0;
  for (size_t d = 0; d < buckets; ++d) {
    next[d] = at;
    at += counts[d];
    ends[d] = at;
  }
  for (size_t d = 0; d < buckets; ++d) {
    while (next[d] < ends[d]) {
      SortEntry moving = first[next[d]];
      size_t to = digit(moving);
      if (to == d) {
        ++next[d];
        continue;
      }
      // Follow the cycle until an entry for bucket d turns up.
      do {
        std::swap(moving, first[next[to]++]);
        to = digit(moving);
      } while (to != d);
      first[next[d]++] = moving;
    }
  }
}

// 8 bytes of `e`'s key from byte `at` on, big-endian, zero-padded.
uint64_t KeyChunk(const SortEntry& e, const char* arena, uint32_t at) {
  return e.key_len <= at ? 0 : KeyPrefix(std::string_view(arena + e.offset + at, e.key_len - at));
}

// Keys are radix-sorted on at most this many leading bytes (bounding the
// recursion); buckets still tied after them finish with the comparison sort.
constexpr uint32_t kMaxRadixBytes = 64;

// Sorts [first, last), whose entries share the partition and the key bytes
// before `at` + `depth`, by key byte `at` + `depth` and deeper. `prefix`
// holds key bytes [at, at + 8): the caller's entries hold bytes [0, 8), and
// a bucket still tied after its 8 bytes loads the next 8 into `prefix`
// (RestorePrefix puts the first 8 back when the bucket is sorted).
void SortByPrefix(SortEntry* first, SortEntry* last, uint32_t at, int depth, const char* arena) {
  for (;;) {
    const size_t n = static_cast<size_t>(last - first);
    if (n < 2) return;
    if (n < kSmallBucket) return FinishBucket(first, last, arena);
    if (depth >= 8) {  // every entry has the same 8 bytes from `at`
      const uint32_t next_at = at + 8;
      const bool longer = std::any_of(first, last, [&](const SortEntry& e) { return e.key_len > next_at; });
      if (!longer || next_at >= kMaxRadixBytes) return FinishBucket(first, last, arena);
      const uint64_t saved = at == 0 ? first->prefix : 0;
      for (SortEntry* e = first; e != last; ++e) e->prefix = KeyChunk(*e, arena, next_at);
      SortByPrefix(first, last, next_at, 0, arena);
      if (at == 0) {
        for (SortEntry* e = first; e != last; ++e) e->prefix = saved;
      }
      return;
    }
    const int shift = 56 - 8 * depth;
    std::array<size_t, 256> counts{};
    for (const SortEntry* e = first; e != last; ++e) ++counts[(e->prefix >> shift) & 0xff];
    const auto digit = [shift](const SortEntry& e) { return (e.prefix >> shift) & 0xff; };
    if (counts[digit(*first)] == n) {  // one byte value: nothing to move at this level
      ++depth;
      continue;
    }
    std::array<size_t, 256> next, ends;
    Permute(first, 256, counts.data(), next.data(), ends.data(), digit);
    size_t begin = 0;
    for (size_t d = 0; d < 256; ++d) {
      if (ends[d] - begin > 1) SortByPrefix(first + begin, first + ends[d], at, depth + 1, arena);
      begin = ends[d];
    }
    return;
  }
}

}  // namespace

bool EntryLess(const SortEntry& a, const SortEntry& b, const char* arena) {
  if (a.partition != b.partition) return a.partition < b.partition;
  if (a.prefix != b.prefix) return a.prefix < b.prefix;
  // Equal first 8 bytes (zero padding included): the rest decides.
  if (a.key_len > 8 || b.key_len > 8) {
    int c = CompareBytes(KeyTail(a, arena), KeyTail(b, arena));
    if (c != 0) return c < 0;
  }
  if (a.key_len != b.key_len) return a.key_len < b.key_len;
  return a.seq < b.seq;
}

void SortEntries(std::span<SortEntry> entries, const char* arena, uint32_t partitions) {
  SortEntry* first = entries.data();
  const size_t n = entries.size();
  if (n < kSmallBucket) return FinishBucket(first, first + n, arena);
  // Level one: the partition (a counting sort with one bucket per partition).
  uint32_t buckets = std::max<uint32_t>(partitions, 1);
  for (const SortEntry& e : entries) buckets = std::max(buckets, e.partition + 1);
  if (buckets == 1) return SortByPrefix(first, first + n, 0, 0, arena);
  std::vector<size_t> counts(buckets, 0), next(buckets), ends(buckets);
  for (const SortEntry& e : entries) ++counts[e.partition];
  Permute(first, buckets, counts.data(), next.data(), ends.data(),
          [](const SortEntry& e) { return static_cast<size_t>(e.partition); });
  size_t begin = 0;
  for (size_t p = 0; p < buckets; ++p) {
    SortByPrefix(first + begin, first + ends[p], 0, 0, arena);
    begin = ends[p];
  }
}

}  // namespace mr::worker::internal
