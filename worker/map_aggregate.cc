// The count table of map-side aggregation; design in map_aggregate.h.
#include "worker/map_aggregate.h"

#include <algorithm>
#include <cassert>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "worker/record_sort.h"

namespace mr::worker {
namespace {

using internal::KeyPrefix;
using internal::Load64;

// Slots of a new table, unless the limit is small (then fewer, at least 16).
constexpr size_t kInitialSlots = 1024;
constexpr size_t kMinSlots = 16;

// murmur3's 64-bit finalizer: every input bit affects every output bit.
inline uint64_t Fmix64(uint64_t h) {
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
[[gnu::always_inline]] inline uint64_t HashKey(std::string_view key, uint64_t prefix) {
  constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;
  const size_t n = key.size();
  if (n <= 8) return Fmix64(prefix ^ (n * kGolden));
  if (n <= 16) return Fmix64(prefix ^ Fmix64(Load64(key.data() + n - 8) ^ (n * kGolden)));
  return XXH3_64bits(key.data(), n);
}

// Whether bytes [8, n) of a and b are equal. REQUIRES: n > 8.
inline bool TailsEqual(const char* a, const char* b, size_t n) {
  size_t i = 8;
  for (; i + 8 <= n; i += 8) {
    if (Load64(a + i) != Load64(b + i)) return false;
  }
  return i == n || Load64(a + n - 8) == Load64(b + n - 8);
}

}  // namespace

CountTable::CountTable(int64_t memory_limit) : limit_(memory_limit) {
  size_t slots = kInitialSlots;
  while (slots > kMinSlots && static_cast<int64_t>(2 * slots * sizeof(Slot)) > limit_) slots /= 2;
  slots_.assign(slots, Slot{0, 0, 0, 0, kFree});
  mask_ = slots - 1;
}

int64_t CountTable::memory_bytes() const {
  return static_cast<int64_t>(slots_.size() * sizeof(Slot) + arena_.size());
}

bool CountTable::Increment(uint32_t partition, std::string_view key, int64_t n,
                           uint64_t* hash) noexcept {
  assert(!sorted_);
  const uint64_t prefix = KeyPrefix(key);
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

bool CountTable::Insert(uint32_t partition, std::string_view key, uint64_t hash, int64_t n) {
  assert(!sorted_ && partition != kFree);
  const bool grow = (size_ + 1) * 4 > slots_.size() * 3;
  if (size_ > 0) {
    const size_t slot_bytes = (grow ? 2 : 1) * slots_.size() * sizeof(Slot);
    if (static_cast<int64_t>(slot_bytes + arena_.size() + key.size()) > limit_) return false;
  }
  if (grow) Grow();
  if (arena_.capacity() == 0) arena_.reserve(static_cast<size_t>(limit_));  // address space
  size_t i = hash & mask_;
  while (slots_[i].partition != kFree) i = (i + 1) & mask_;
  slots_[i] = Slot{KeyPrefix(key), static_cast<uint64_t>(n), arena_.size(),
                   static_cast<uint32_t>(key.size()), partition};
  arena_.append(key);
  ++size_;
  return true;
}

void CountTable::Grow() {
  std::vector<Slot> old(2 * slots_.size(), Slot{0, 0, 0, 0, kFree});
  old.swap(slots_);
  mask_ = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.partition == kFree) continue;
    size_t i = HashKey(Key(s), s.prefix) & mask_;
    while (slots_[i].partition != kFree) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

void CountTable::Sort() {
  size_t used = 0;
  for (const Slot& s : slots_) {
    if (s.partition != kFree) slots_[used++] = s;
  }
  std::sort(slots_.begin(), slots_.begin() + used, [this](const Slot& a, const Slot& b) {
    if (a.partition != b.partition) return a.partition < b.partition;
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    // Equal first 8 bytes (zero padding included): the rest decides.
    if (a.key_len > 8 && b.key_len > 8) {
      const int c = Key(a).substr(8).compare(Key(b).substr(8));
      if (c != 0) return c < 0;
    }
    return a.key_len < b.key_len;
  });
  sorted_ = true;
}

CountTable::Entry CountTable::entry(size_t i) const {
  assert(sorted_ && i < size_);
  const Slot& s = slots_[i];
  return Entry{s.partition, Key(s), static_cast<int64_t>(s.count)};
}

void CountTable::Clear() {
  std::fill(slots_.begin(), slots_.end(), Slot{0, 0, 0, 0, kFree});
  size_ = 0;
  sorted_ = false;
  arena_.clear();
  if (arena_.capacity() > 2 * static_cast<size_t>(limit_)) std::string().swap(arena_);
}

}  // namespace mr::worker
