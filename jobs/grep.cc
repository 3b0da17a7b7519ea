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
// cache lock and a DFA step per byte; docs/benchmarks.md, issue 15).

#include <re2/re2.h>

#include <cstring>
#include <memory>
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

  // Map for a plain literal pattern: the same matches, found by memmem.
  void MapLiteral(std::string_view line, Emitter& out) const {
    const char* p = line.data();
    const char* const end = p + line.size();
    const size_t n = literal_.size();
    while (static_cast<size_t>(end - p) >= n) {
      const void* m = ::memmem(p, end - p, literal_.data(), n);
      if (m == nullptr) break;
      out.Emit(literal_, "1");
      p = static_cast<const char*>(m) + n;
    }
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
