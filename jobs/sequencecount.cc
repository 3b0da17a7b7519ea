// SequenceCount: how often each sequence of three consecutive words occurs
// within a line. PUMA's sequence-count (Ahmad et al., "PUMA: Purdue MapReduce
// Benchmarks Suite", 2012); JoSS §6 "SC" (Table 5: FP ≈ 0.57).
//
// Words are WordCount's (runs of non-whitespace bytes, jobs/wordcount.cc);
// sequences do not cross lines. A line of n >= 3 words has n-2 sequences:
// "a b c d" gives "a b c" and "b c d". The key is the three words joined by
// one space, so "a\tb  c" counts as "a b c".
//
// Output: `w1 w2 w3\tcount`. Parameter combiner (default true).

#include <memory>
#include <string>
#include <vector>

#include "jobs/all_jobs.h"
#include "jobs/code_hashes.h"
#include "jobs/job_util.h"

namespace mr::jobs {
namespace {

class SequenceCount : public Job {
 public:
  Status Configure(const Params& params) override {
    MR_ASSIGN_OR_RETURN(combiner_, ParseBoolParam(params, "combiner", true));
    return Status::OK();
  }

  // Called for each line of the split: emits (w_i w_i+1 w_i+2, "1") for
  // every three consecutive words of the line.
  void Map(std::string_view line, const LineInfo& info, Emitter& out) override {
    words_.clear();
    ForEachWord(line, [&](std::string_view word) { words_.push_back(word); });
    for (size_t i = 0; i + 2 < words_.size(); ++i) {
      key_.assign(words_[i]).append(" ").append(words_[i + 1]).append(" ").append(words_[i + 2]);
      out.Emit(key_, "1");
    }
  }

  // Called once per sequence, in bytewise order: emits (sequence, sum). Also
  // the combiner.
  void Reduce(std::string_view sequence, ValueStream& counts, Emitter& out) override {
    out.Emit(sequence, std::to_string(SumCounts(counts)));
  }

  bool has_combiner() const override { return combiner_; }
  // Combine is Reduce: exactly SumCounts, so map tasks may count in a hash table.
  CombinerKind combiner_kind() const override { return CombinerKind::kSumCounts; }

 private:
  bool combiner_ = true;
  std::vector<std::string_view> words_;  // scratch for Map
  std::string key_;
};

}  // namespace

const JobInfo kSequenceCountJob = {
    .name = "sequencecount",
    .description = "count each sequence of three consecutive words in a line",
    .params = {{"combiner", "true", "sum counts inside map tasks too (true or false)"}},
    .code_hash = kCodeHashSequenceCount,
    .make = []() -> std::unique_ptr<Job> { return std::make_unique<SequenceCount>(); },
};

}  // namespace mr::jobs
