// Bigram: how often each pair of consecutive words occurs within a line.
// The course's lab 1 reference solution (docs/course/lab1-job.md); not
// registered in the product: copy it in as that page says.
//
// Words are WordCount's (maximal runs of bytes that are not ASCII
// whitespace, jobs/wordcount.cc); pairs do not cross lines. A line of n >= 2
// words has n-1 bigrams: "a b c" gives "a b" and "b c". The key is the two
// words joined by one space, so "a\tb" counts as "a b".
//
// Output: `w1 w2\tcount`. Parameter combiner (default true).

#include <memory>
#include <string>

#include "jobs/all_jobs.h"
#include "jobs/code_hashes.h"
#include "jobs/job_util.h"

namespace mr::jobs {
namespace {

class Bigram : public Job {
 public:
  Status Configure(const Params& params) override {
    MR_ASSIGN_OR_RETURN(combiner_, ParseBoolParam(params, "combiner", true));
    return Status::OK();
  }

  // Called for each line of the split: emits ("w1 w2", "1") for every pair
  // of consecutive words of the line.
  void Map(std::string_view line, const LineInfo& info, Emitter& out) override {
    std::string_view previous;
    bool have_previous = false;
    ForEachWord(line, [&](std::string_view word) {
      if (have_previous) {
        key_.assign(previous);
        key_ += ' ';
        key_.append(word);
        out.Emit(key_, "1");
      }
      previous = word;
      have_previous = true;
    });
  }

  // Called once per bigram, in bytewise order, with all its counts: emits
  // (bigram, sum). Also the combiner (sums of sums are sums).
  void Reduce(std::string_view bigram, ValueStream& counts, Emitter& out) override {
    out.Emit(bigram, std::to_string(SumCounts(counts)));
  }

  bool has_combiner() const override { return combiner_; }
  CombinerKind combiner_kind() const override { return CombinerKind::kSumCounts; }

 private:
  bool combiner_ = true;
  std::string key_;  // scratch: Emit copies what it needs
};

}  // namespace

const JobInfo kBigramJob = {
    .name = "bigram",
    .description = "count each pair of consecutive words within a line",
    .params = {{"combiner", "true", "sum counts inside map tasks too (true or false)"}},
    .code_hash = kCodeHashBigram,
    .make = []() -> std::unique_ptr<Job> { return std::make_unique<Bigram>(); },
};

}  // namespace mr::jobs
