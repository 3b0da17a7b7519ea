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

// Slots of a new table, unless the limit is small (then fewer, at least 16).
constexpr size_t kInitialSlots = 1024;
constexpr size_t kMinSlots = 16;

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

uint64_t CountTable::HashLongKey(std::string_view key) {
  return XXH3_64bits(key.data(), key.size());
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
