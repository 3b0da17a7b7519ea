// Permu: how often each run of three consecutive sequence lines occurs in
// DNA data. The reduce-heavy job of JoSS §6 ("generates the permutation for
// three consecutive DNA sequences in DNA data files"; Table 5: FP ≈ 3, since
// every line is emitted three times, in three keys).
//
// Input is FASTA: a line whose first byte is '>' is a header and starts a new
// record; an empty line also ends the record; every other line is a sequence
// line s_1, s_2, ... of the current record. For each s_i followed by s_i+1
// and s_i+2 in the same record, Map emits (s_i s_i+1 s_i+2, "1"): the three
// lines concatenated with no separator. A triple belongs to the split holding
// its first line; the two lines after the split come as lookahead lines
// (lookahead_lines() = 2, info.in_split == false).
//
// Output: `triple\tcount`. Parameter combiner (default false: the triples of
// real genomes are nearly all distinct, so combining saves little).

#include <memory>
#include <string>

#include "jobs/all_jobs.h"
#include "jobs/code_hashes.h"
#include "jobs/job_util.h"

namespace mr::jobs {
namespace {

class Permu : public Job {
 public:
  Status Configure(const Params& params) override {
    MR_ASSIGN_OR_RETURN(combiner_, ParseBoolParam(params, "combiner", false));
    return Status::OK();
  }

  // Called for each line of the split, then for up to two lookahead lines.
  // Remembers the record's last two sequence lines; emits a triple when the
  // third arrives and the first started in this split.
  void Map(std::string_view line, const LineInfo& info, Emitter& out) override {
    if (line.empty() || line[0] == '>') {
      held_ = 0;  // the record ends
      return;
    }
    if (held_ == 2) {
      if (in_split_[0]) {
        key_.assign(lines_[0]).append(lines_[1]).append(line);
        out.Emit(key_, "1");
      }
      lines_[0].swap(lines_[1]);
      in_split_[0] = in_split_[1];
      held_ = 1;
    }
    lines_[held_].assign(line);
    in_split_[held_] = info.in_split;
    ++held_;
  }

  // Called once per triple, in bytewise order: emits (triple, sum). Also the
  // combiner when it is on.
  void Reduce(std::string_view triple, ValueStream& counts, Emitter& out) override {
    out.Emit(triple, std::to_string(SumCounts(counts)));
  }

  bool has_combiner() const override { return combiner_; }
  // Combine is Reduce: exactly SumCounts, so map tasks may count in a hash table.
  CombinerKind combiner_kind() const override { return CombinerKind::kSumCounts; }
  int lookahead_lines() const override { return 2; }

 private:
  bool combiner_ = false;
  // The record's last held_ (0..2) sequence lines, oldest first, and
  // whether each started in the split.
  int held_ = 0;
  std::string lines_[2];
  bool in_split_[2] = {false, false};
  std::string key_;
};

}  // namespace

const JobInfo kPermuJob = {
    .name = "permu",
    .description = "count each run of three consecutive sequence lines of FASTA records",
    .params = {{"combiner", "false", "sum counts inside map tasks too (true or false)"}},
    .code_hash = kCodeHashPermu,
    .make = []() -> std::unique_ptr<Job> { return std::make_unique<Permu>(); },
};

}  // namespace mr::jobs
