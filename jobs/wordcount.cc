// WordCount: how often each word occurs. The first example of the MapReduce
// paper (Dean & Ghemawat, OSDI 2004, §2.1), Hadoop's examples/WordCount and
// PUMA's word-count; JoSS §6 "WC" (Table 5: FP ≈ 1.04, map-heavy).
//
// A word is a maximal run of bytes that are not ASCII whitespace (space, \t,
// \n, \r, \f, \v), as Hadoop's StringTokenizer splits (which also counts \v
// here). No case folding and punctuation stays: "The", "the" and "the," are
// three words. Bytes >= 0x80 are word bytes (a UTF-8 no-break space joins).
//
// Output: `word\tcount`. Parameter combiner (default true).

#include <memory>
#include <string>

#include "jobs/all_jobs.h"
#include "jobs/code_hashes.h"
#include "jobs/job_util.h"

namespace mr::jobs {
namespace {

class WordCount : public Job {
 public:
  Status Configure(const Params& params) override {
    MR_ASSIGN_OR_RETURN(combiner_, ParseBoolParam(params, "combiner", true));
    return Status::OK();
  }

  // Called for each line of the split: emits (word, "1") for every word.
  void Map(std::string_view line, const LineInfo& info, Emitter& out) override {
    ForEachWord(line, [&](std::string_view word) { out.Emit(word, "1"); });
  }
  // The same for many lines at once: '\n' and '\r' separate words too.
  void MapLines(std::string_view lines, const LineInfo& info, Emitter& out) override {
    Map(lines, info, out);
  }

  // Called once per word, words in bytewise order, with all its counts:
  // emits (word, sum). Also the combiner, over one map task's counts (sums of
  // sums are sums).
  void Reduce(std::string_view word, ValueStream& counts, Emitter& out) override {
    out.Emit(word, std::to_string(SumCounts(counts)));
  }

  bool has_combiner() const override { return combiner_; }
  // Combine is Reduce: exactly SumCounts, so map tasks may count in a hash table.
  CombinerKind combiner_kind() const override { return CombinerKind::kSumCounts; }
  // Map is exactly "(word, 1) for each word": a map task that counts may
  // count the words of many lines at once.
  MapKind map_kind() const override { return MapKind::kCountWords; }

 private:
  bool combiner_ = true;
};

}  // namespace

const JobInfo kWordCountJob = {
    .name = "wordcount",
    .description = "count each whitespace-separated word",
    .params = {{"combiner", "true", "sum counts inside map tasks too (true or false)"}},
    .code_hash = kCodeHashWordCount,
    .make = []() -> std::unique_ptr<Job> { return std::make_unique<WordCount>(); },
};

}  // namespace mr::jobs
