// The word splitter of the built-in jobs (WordCount, InvertedIndex,
// SequenceCount) and of the map task's word counting (jobs::MapKind::
// kCountWords, worker/task_runner.cc), which must split exactly alike.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mr::jobs {

// The bytes that separate words: ASCII space, \t, \n, \r, \f and \v (the
// C locale's isspace). Bytes >= 0x80 (UTF-8, e.g. a no-break space) are
// never separators.
inline bool IsWordSeparator(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// ForEachWord byte by byte: the reference the SSE2 version is tested
// against, and the splitter where SSE2 is missing.
template <typename Fn>
void ForEachWordScalar(std::string_view line, Fn&& fn) {
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsWordSeparator(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !IsWordSeparator(line[i])) ++i;
    if (i > start) fn(line.substr(start, i - start));
  }
}

#if defined(__SSE2__)
namespace word_split {

// Bit i set: p[i] is a separator (0x09..0x0D, or 0x20), for 16 bytes.
inline uint64_t SeparatorMask16(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i c = _mm_sub_epi8(v, _mm_set1_epi8(9));  // \t..\r become 0..4
  const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(c, _mm_set1_epi8(4)), c);
  const __m128i space = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_or_si128(control, space)));
}

// The same for p[0, 64), or for p[0, len) with len < 64 and the bits from
// len on set (what follows a line separates its last word).
inline uint64_t SeparatorMask(const char* p, size_t len) {
  alignas(16) char tail[64];
  if (len < 64) {  // no read past the line: copy it into spaces
    std::memset(tail, ' ', sizeof tail);
    std::memcpy(tail, p, len);
    p = tail;
  }
  return SeparatorMask16(p) | SeparatorMask16(p + 16) << 16 | SeparatorMask16(p + 32) << 32 |
         SeparatorMask16(p + 48) << 48;
}

}  // namespace word_split
#endif

// Calls fn(word) for each maximal run of non-separator bytes of `line`, left
// to right. With SSE2, 64 bytes at a time: a mask of the separators, whose
// word starts and ends come out with count-trailing-zeros instead of a
// mispredicted branch at every word's end (2.6 times the byte loop's speed
// on generated text: docs/benchmarks.md).
template <typename Fn>
void ForEachWord(std::string_view line, Fn&& fn) {
#if defined(__SSE2__)
  const char* p = line.data();
  const size_t n = line.size();
  constexpr size_t kNone = SIZE_MAX;
  size_t open = kNone;  // where a word began that runs into this chunk
  for (size_t base = 0; base < n; base += 64) {
    const uint64_t separators = word_split::SeparatorMask(p + base, std::min<size_t>(n - base, 64));
    const uint64_t words = ~separators;
    const uint64_t before = open == kNone ? 1 : 0;  // byte base - 1 as a separator bit
    uint64_t starts = words & (separators << 1 | before);
    uint64_t ends = separators & (words << 1 | (before ^ 1));
    if (open != kNone) {
      if (ends == 0) continue;  // the word goes on past this chunk
      fn(line.substr(open, base + static_cast<size_t>(__builtin_ctzll(ends)) - open));
      ends &= ends - 1;
      open = kNone;
    }
    while (starts != 0) {  // starts and ends alternate
      const size_t start = static_cast<size_t>(__builtin_ctzll(starts));
      starts &= starts - 1;
      if (ends == 0) {
        open = base + start;
        break;
      }
      const size_t end = static_cast<size_t>(__builtin_ctzll(ends));
      ends &= ends - 1;
      fn(line.substr(base + start, end - start));
    }
  }
  if (open != kNone) fn(line.substr(open));
#else
  ForEachWordScalar(line, fn);
#endif
}

}  // namespace mr::jobs
