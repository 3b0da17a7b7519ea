// Grep: how often each match of a regular expression occurs. Hadoop's
// examples/Grep (its first job, RegexMapper + LongSumReducer) and PUMA's grep;
// JoSS §6 "Grep" (Table 5: FP ≈ 0.10, map-heavy).
//
// Parameter pattern (required): an RE2 regular expression
// (github.com/google/re2/wiki/Syntax), matched in UTF-8 mode against each
// line. In a line, matches are found left to right and do not overlap, as
// RE2::FindAndConsume finds them, except that the line's context is kept (^
// matches only at the line's start). Each match counts once; an empty match
// counts nothing and the search resumes one byte later. "a*" in "baab" counts
// "aa" once.
//
// Output: `match\tcount`. The combiner (always on) sums counts.
//
// A pattern that is a plain literal (printable ASCII without any of RE2's
// metacharacters \.+*?()|[]{}^$, e.g. "the") is searched for with memmem
// instead of RE2: an ASCII literal matches the same bytes in UTF-8 mode, and
// the non-overlapping leftmost matches are those of a search that resumes
// after each match. Same output, without RE2's per-search overhead (its
// cache lock and a DFA step per byte; docs/benchmarks.md, issue 15). Such a
// literal holds no '\n' or '\r', so no match spans a line's end: the map
// task may then pass many lines at once (MapKind::kLineBlocks), and the
// literal is counted 16 positions at a time (CountLiteral; issue 29).

#include <re2/re2.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <string>
#include <string_view>

#include "jobs/all_jobs.h"
#include "jobs/code_hashes.h"
#include "jobs/job_util.h"

namespace mr::jobs {
namespace {

// Whether RE2 reads `pattern` as the literal string of its own bytes.
bool IsPlainLiteral(std::string_view pattern) {
  for (const char c : pattern) {
    if (c < 0x20 || c > 0x7e || std::strchr("\\.+*?()|[]{}^$", c) != nullptr) return false;
  }
  return !pattern.empty();
}

// The number of non-overlapping occurrences of `needle` (not empty) in
// [p, end), leftmost first: what a search that resumes after each match
// finds. With SSE2, for needles of 2 bytes or more: 16 candidate positions at
// a time, those whose first, second (needles of 3 bytes or more) and last
// bytes match, each then checked on the bytes between (W. Mula,
// "SIMD-friendly algorithms for substring searching", 2016, "Generic SIMD",
// with a third compare: for a 3-byte word like "the" the mask is then the
// matches themselves); memmem for the last positions. Counting inside the
// loop, rather than returning each match to a caller that emits it, is what
// made Grep's map cheaper in issue 29 (docs/benchmarks.md, "Grep and Sort,
// issue 29 item 4").
int64_t CountLiteral(const char* p, const char* end, std::string_view needle) {
  const size_t n = needle.size();
  int64_t count = 0;
  const char* next = p;  // where the next match may start (after the last one)
#if defined(__SSE2__)
  if (n >= 2) {
    const __m128i first = _mm_set1_epi8(needle[0]);
    const __m128i second = _mm_set1_epi8(needle[n >= 3 ? 1 : 0]);
    const __m128i last = _mm_set1_epi8(needle[n - 1]);
    const size_t second_at = n >= 3 ? 1 : 0;
    for (; static_cast<size_t>(end - p) >= n - 1 + 16; p += 16) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + second_at));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n - 1));
      unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(
          _mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, second)),
          _mm_cmpeq_epi8(c, last))));
      for (; mask != 0; mask &= mask - 1) {
        const char* at = p + __builtin_ctz(mask);
        if (at < next) continue;  // overlaps the match before it
        if (n > 3 && std::memcmp(at + 2, needle.data() + 2, n - 3) != 0) continue;
        ++count;
        next = at + n;
      }
    }
  }
#endif
  p = std::max(p, next);
  while (static_cast<size_t>(end - p) >= n) {
    const char* at = static_cast<const char*>(::memmem(p, end - p, needle.data(), n));
    if (at == nullptr) break;
    ++count;
    p = at + n;
  }
  return count;
}

class Grep : public Job {
 public:
  // InvalidArgument with RE2's message when the pattern does not compile.
  Status Configure(const Params& params) override {
    const std::string pattern = GetParam(params, "pattern");
    if (pattern.empty()) return Status::InvalidArgument("parameter 'pattern' is required");
    RE2::Options options;
    options.set_log_errors(false);
    re_ = std::make_unique<RE2>(pattern, options);
    if (!re_->ok()) return Status::InvalidArgument("parameter 'pattern': " + re_->error());
    literal_ = IsPlainLiteral(pattern) ? pattern : std::string();
    return Status::OK();
  }

  // Called for each line of the split: emits (match, "1") for every
  // non-empty match.
  void Map(std::string_view line, const LineInfo& info, Emitter& out) override {
    if (!literal_.empty()) {
      MapLiteral(line, out);
      return;
    }
    const re2::StringPiece text(line.data(), line.size());
    re2::StringPiece match;
    size_t pos = 0;
    while (pos <= line.size() && re_->Match(text, pos, line.size(), RE2::UNANCHORED, &match, 1)) {
      const size_t begin = match.data() - line.data();
      if (match.empty()) {
        pos = begin + 1;
        continue;
      }
      out.Emit(std::string_view(match.data(), match.size()), "1");
      pos = begin + match.size();
    }
  }

  // A plain literal's matches, line by line or many lines at once.
  MapKind map_kind() const override {
    return literal_.empty() ? MapKind::kLines : MapKind::kLineBlocks;
  }
  void MapLines(std::string_view lines, const LineInfo& info, Emitter& out) override {
    MapLiteral(lines, out);
  }

  // Map for a plain literal pattern: the same pairs, (literal, "1") once per
  // match, counted by CountLiteral and handed on in one call.
  void MapLiteral(std::string_view text, Emitter& out) const {
    out.EmitRepeated(literal_, "1", CountLiteral(text.data(), text.data() + text.size(), literal_));
  }

  // Called once per match, in bytewise order: emits (match, sum). Also the
  // combiner.
  void Reduce(std::string_view match, ValueStream& counts, Emitter& out) override {
    out.Emit(match, std::to_string(SumCounts(counts)));
  }

  bool has_combiner() const override { return true; }
  // Combine is Reduce: exactly SumCounts, so map tasks may count in a hash table.
  CombinerKind combiner_kind() const override { return CombinerKind::kSumCounts; }

 private:
  std::unique_ptr<RE2> re_;
  std::string literal_;  // the pattern when IsPlainLiteral, else empty (use re_)
};

}  // namespace

const JobInfo kGrepJob = {
    .name = "grep",
    .description = "count the matches of a regular expression",
    .params = {{"pattern", "", "required: the RE2 regular expression to count matches of"}},
    .code_hash = kCodeHashGrep,
    .make = []() -> std::unique_ptr<Job> { return std::make_unique<Grep>(); },
};

}  // namespace mr::jobs
