// Sort: the input lines in bytewise order (as `LC_ALL=C sort`), duplicates
// kept, as one total order over R part files: part-00000, part-00001, ...
// concatenated are the sorted input. Hadoop's examples/Sort and TeraSort,
// with the TotalOrderPartitioner's sampled split points.
//
// Plan() sorts the sample lines and picks R-1 split points that cut it into
// R parts of about equal bytes (each line weighing its length + 1, what it
// adds to the output), not equal line counts: a reducer's work is its
// bytes, and short lines (the empty lines between paragraphs of text) sort
// first, so count quantiles gave the first reducer 42 % of a 1 GiB text's
// bytes and the second 58 % (docs/benchmarks.md, "Sort"). Partition() sends a line to the number of split points <= it
// (std::upper_bound), so every line of partition p sorts before every line
// of partition p+1. The points travel to every task in the parameter
// split_points: each point as lowercase hex, joined by ','. Empty and
// repeated points are dropped (they only leave a part file empty), so a
// small or uniform sample may use fewer than R-1 points; extra points, if
// split_points was set by hand for more reducers, send the top keys to the
// last reducer. One reducer needs no points.
//
// Map emits (line, ""); Reduce emits the line once per value; output is the
// line and '\n'.

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "jobs/all_jobs.h"
#include "jobs/code_hashes.h"
#include "jobs/job_util.h"

namespace mr::jobs {
namespace {

// Lowercase hex of `bytes`, and back (false for anything else).
std::string EncodeHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : bytes) {
    hex.push_back(kDigits[c >> 4]);
    hex.push_back(kDigits[c & 15]);
  }
  return hex;
}

bool DecodeHex(std::string_view hex, std::string* bytes) {
  auto value = [](char c) { return c >= 'a' && c <= 'f' ? c - 'a' + 10 : c - '0'; };
  auto is_digit = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  if (hex.size() % 2 != 0) return false;
  bytes->clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    if (!is_digit(hex[i]) || !is_digit(hex[i + 1])) return false;
    bytes->push_back(static_cast<char>(value(hex[i]) * 16 + value(hex[i + 1])));
  }
  return true;
}

class Sort : public Job {
 public:
  // Called first in every task. InvalidArgument for malformed split_points.
  Status Configure(const Params& params) override {
    const std::string encoded = GetParam(params, "split_points");
    for (size_t pos = 0; !encoded.empty() && pos <= encoded.size();) {
      const size_t comma = std::min(encoded.find(',', pos), encoded.size());
      std::string point;
      if (!DecodeHex(std::string_view(encoded).substr(pos, comma - pos), &point) || point.empty() ||
          (!points_.empty() && point <= points_.back())) {
        return Status::InvalidArgument(
            "parameter 'split_points' must be increasing non-empty points in lowercase hex, "
            "joined by ','");
      }
      points_.push_back(std::move(point));
      pos = comma + 1;
    }
    return Status::OK();
  }

  // Called for each line of the split.
  void Map(std::string_view line, const LineInfo& info, Emitter& out) override {
    out.Emit(line, "");
  }

  // Called once per distinct line, in bytewise order: one copy per value.
  void Reduce(std::string_view line, ValueStream& values, Emitter& out) override {
    std::string_view unused;
    while (values.Next(&unused)) out.Emit(line, "");
  }

  // Called for each map output pair: the number of split points <= key.
  int Partition(std::string_view key, int reducers) const override {
    auto above = std::upper_bound(points_.begin(), points_.end(), key);
    return std::min(static_cast<int>(above - points_.begin()), reducers - 1);
  }

  // Called for each pair Reduce emits: the line alone.
  void WriteOutput(std::string_view key, std::string_view value, std::string* out) const override {
    out->append(key);
    out->push_back('\n');
  }

  // Called once before any task: R-1 split points that cut the sorted
  // sample into R parts of about equal bytes (see the file comment).
  Status Plan(const std::vector<std::string>& sample_lines, int reducers, Params* params) override {
    std::vector<std::string> sorted = sample_lines;
    std::sort(sorted.begin(), sorted.end());
    // before[k]: output bytes (line and '\n') of the sample lines before sorted[k].
    std::vector<double> before(sorted.size() + 1, 0);
    for (size_t k = 0; k < sorted.size(); ++k) before[k + 1] = before[k] + sorted[k].size() + 1;
    std::string encoded, last;
    size_t k = 0;
    for (int i = 1; i < reducers && !sorted.empty(); ++i) {
      // The point whose bytes before it are closest to i/R of the total.
      const double target = before.back() * i / reducers;
      while (k + 1 < sorted.size() && std::abs(before[k + 1] - target) < std::abs(before[k] - target)) {
        ++k;
      }
      const std::string& point = sorted[k];
      if (point.empty() || point == last) continue;
      if (!encoded.empty()) encoded.push_back(',');
      encoded += EncodeHex(point);
      last = point;
    }
    (*params)["split_points"] = encoded;
    return Status::OK();
  }

 private:
  std::vector<std::string> points_;  // increasing
};

}  // namespace

const JobInfo kSortJob = {
    .name = "sort",
    .description = "sort lines bytewise into one total order over all part files",
    .params = {{"split_points", "", "set by Plan(): hex of each split point, joined by ','"}},
    .code_hash = kCodeHashSort,
    .make = []() -> std::unique_ptr<Job> { return std::make_unique<Sort>(); },
};

}  // namespace mr::jobs
