// InvertedIndex: for each word, the files it occurs in. PUMA's
// inverted-index ("takes a list of data files as input and generates
// word-to-file indexing"); JoSS §6 "II" (Table 5: FP ≈ 1.17). The input is
// usually a directory of files.
//
// Words are WordCount's (runs of non-whitespace bytes, jobs/wordcount.cc). A
// file is named by its base name (the part of LineInfo::file after the last
// '/'), so files of the same name in two input directories are one entry.
// Lists are comma-separated: file names containing ',' are not supported
// (their entries would be split).
//
// Output: `word\tfile1,file2,...`, names sorted bytewise, each once.
// Parameter combiner (default true): dedupes the names within a map task.

#include <algorithm>
#include <memory>
#include <set>
#include <string>

#include "jobs/all_jobs.h"
#include "jobs/code_hashes.h"
#include "jobs/job_util.h"

namespace mr::jobs {
namespace {

class InvertedIndex : public Job {
 public:
  Status Configure(const Params& params) override {
    MR_ASSIGN_OR_RETURN(combiner_, ParseBoolParam(params, "combiner", true));
    return Status::OK();
  }

  // Called for each line of the split: emits (word, file name) per word.
  void Map(std::string_view line, const LineInfo& info, Emitter& out) override {
    const std::string_view name = info.file.substr(info.file.rfind('/') + 1);
    ForEachWord(line, [&](std::string_view word) { out.Emit(word, name); });
  }

  // Called once per word, in bytewise order, with lists of names (one name
  // from Map, several from the combiner): emits (word, the merged list).
  // Also the combiner.
  void Reduce(std::string_view word, ValueStream& lists, Emitter& out) override {
    std::set<std::string> names;
    std::string_view list;
    while (lists.Next(&list)) {
      for (size_t pos = 0; pos <= list.size();) {
        size_t comma = std::min(list.find(',', pos), list.size());
        names.emplace(list.substr(pos, comma - pos));
        pos = comma + 1;
      }
    }
    std::string merged;
    for (const std::string& name : names) {
      if (&name != &*names.begin()) merged.push_back(',');
      merged.append(name);
    }
    out.Emit(word, merged);
  }

  bool has_combiner() const override { return combiner_; }

 private:
  bool combiner_ = true;
};

}  // namespace

const JobInfo kInvertedIndexJob = {
    .name = "invertedindex",
    .description = "list the files each word occurs in",
    .params = {{"combiner", "true", "merge file lists inside map tasks too (true or false)"}},
    .code_hash = kCodeHashInvertedIndex,
    .make = []() -> std::unique_ptr<Job> { return std::make_unique<InvertedIndex>(); },
};

}  // namespace mr::jobs
