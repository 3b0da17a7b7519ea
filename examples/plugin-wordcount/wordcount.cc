// WordCount as a plug-in: the built-in jobs/wordcount.cc, built as a .so
// against the installed SDK (see CMakeLists.txt beside this file and
// docs/user-jobs.md) and run with
//
//     mrctl job run ./libwordcount_plugin.so -i /in -o /out -r 4 --wait
//
// A word is a maximal run of bytes that are not ASCII whitespace; output
// `word\tcount`, exactly as the built-in wordcount's. It also counts the
// lines without a word as a user counter (wordcount/EMPTY_LINES) and says
// each map's longest word in its status (jobs/counters.h).
#include <memory>
#include <string>

#include "jobs/job_util.h"
#include "jobs/plugin.h"

namespace {

using namespace mr::jobs;

class WordCount : public Job {
 public:
  // Called once per line of the split: emits (word, "1") for every word.
  void Map(std::string_view line, const LineInfo&, Emitter& out) override {
    bool empty = true;
    ForEachWord(line, [&](std::string_view word) {
      out.Emit(word, "1");
      empty = false;
      if (word.size() > longest_) longest_ = word.size();
    });
    if (empty) counters().Increment("wordcount", "EMPTY_LINES", 1);
  }
  // Called after the split's last line.
  void FinishMap(Emitter&) override {
    counters().SetStatus("longest word: " + std::to_string(longest_) + " bytes");
  }
  // Called once per word, words in bytewise order: emits (word, sum). Also
  // the combiner.
  void Reduce(std::string_view word, ValueStream& counts, Emitter& out) override {
    out.Emit(word, std::to_string(SumCounts(counts)));
  }
  bool has_combiner() const override { return true; }
  // Combine is Reduce, exactly a sum: map tasks may count in a hash table.
  CombinerKind combiner_kind() const override { return CombinerKind::kSumCounts; }

 private:
  size_t longest_ = 0;  // of this map task's words
};

const JobInfo kJob = {
    .name = "wordcount-plugin",
    .description = "count each whitespace-separated word (as a plug-in)",
    .params = {},
    .code_hash = "",  // the runtime uses the .so's digest
    .make = []() -> std::unique_ptr<Job> { return std::make_unique<WordCount>(); },
};

}  // namespace

MR_JOB_PLUGIN(kJob)
