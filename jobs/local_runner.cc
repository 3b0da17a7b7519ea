#include "jobs/local_runner.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <utility>

#include "jobs/codec.h"
#include "jobs/decompressed_input.h"
#include "jobs/line_reader.h"

namespace mr::jobs {
namespace {

namespace fs = std::filesystem;
using Pair = std::pair<std::string, std::string>;

constexpr size_t kSampleLines = 2000;

struct Split {
  std::string file;
  int64_t file_length = 0;
  int64_t start = 0;
  int64_t end = 0;
};

// Step 1: the input files, cut into splits.
Result<std::vector<Split>> ListSplits(const std::vector<std::string>& inputs, int64_t split_bytes) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    const fs::file_status st = fs::status(input, ec);
    if (st.type() == fs::file_type::not_found) {
      return Status::NotFound("input '" + input + "' does not exist");
    }
    if (ec) return Status::IOError("input '" + input + "': " + ec.message());
    if (fs::is_regular_file(st)) {
      files.push_back(input);
      continue;
    }
    if (!fs::is_directory(st)) {
      return Status::InvalidArgument("input '" + input + "' is not a file or a directory");
    }
    std::vector<std::string> names;
    for (fs::directory_iterator it(input, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      std::error_code type_ec;
      if (name[0] != '.' && name[0] != '_' && it->is_regular_file(type_ec)) names.push_back(name);
    }
    if (ec) return Status::IOError("cannot list input '" + input + "': " + ec.message());
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) files.push_back((fs::path(input) / name).string());
  }
  std::vector<Split> splits;
  for (const std::string& file : files) {
    std::error_code ec;
    const auto length = static_cast<int64_t>(fs::file_size(file, ec));
    if (ec) return Status::IOError("cannot stat '" + file + "': " + ec.message());
    if (CodecOfPath(file) != Codec::kNone) {  // one split: read whole, decompressed
      if (length > 0) splits.push_back({file, length, 0, length});
      continue;
    }
    for (int64_t start = 0; start < length; start += split_bytes) {
      splits.push_back({file, length, start, std::min(start + split_bytes, length)});
    }
  }
  return splits;
}

// Calls fn(line, info) for the lines of `split` and `lookahead` more, until
// fn returns false.
template <typename Fn>
Status ForEachLine(const Split& split, int lookahead, Fn&& fn) {
  auto in = std::make_shared<std::ifstream>(split.file, std::ios::binary);
  if (!*in) return Status::IOError("cannot open '" + split.file + "'");
  auto read = [in, &split](int64_t offset, int64_t n, std::string* out) {
    out->resize(n);
    in->clear();
    in->seekg(offset);
    in->read(out->data(), n);
    if (in->gcount() != n) {
      return Status::IOError("cannot read '" + split.file + "' at " + std::to_string(offset));
    }
    return Status::OK();
  };
  // A compressed file's lines are those of its decompressed bytes
  // (jobs/decompressed_input.h), of a length found at their end.
  const Codec codec = CodecOfPath(split.file);
  std::optional<DecompressedInput> decompressed;
  if (codec != Codec::kNone) decompressed.emplace(codec, split.file, split.file_length, read);
  LineReader reader = decompressed ? LineReader(decompressed->AsReadFn(), LineReader::kUnknownLength, 0,
                                                LineReader::kUnknownLength, lookahead)
                                   : LineReader(read, split.file_length, split.start, split.end, lookahead);
  std::string_view line;
  LineInfo info;
  info.file = split.file;
  for (;;) {
    MR_ASSIGN_OR_RETURN(bool more, reader.Next(&line, &info.offset, &info.in_split));
    if (!more || !fn(line, info)) return Status::OK();
  }
}

// Step 2: the first lines of every split (of every step-th split when there
// are more than kSampleLines), about kSampleLines in all.
Result<std::vector<std::string>> SampleLines(const std::vector<Split>& splits) {
  std::vector<std::string> sample;
  if (splits.empty()) return sample;
  const size_t step = (splits.size() + kSampleLines - 1) / kSampleLines;
  const size_t sampled = (splits.size() + step - 1) / step;
  const size_t per_split = std::max<size_t>(1, kSampleLines / sampled);
  for (size_t i = 0; i < splits.size(); i += step) {
    size_t taken = 0;
    MR_RETURN_IF_ERROR(ForEachLine(splits[i], 0, [&](std::string_view line, const LineInfo&) {
      sample.emplace_back(line);
      return ++taken < per_split;
    }));
  }
  return sample;
}

class PairEmitter : public Emitter {
 public:
  explicit PairEmitter(std::vector<Pair>* out) : out_(out) {}
  void Emit(std::string_view key, std::string_view value) override {
    out_->emplace_back(key, value);
  }

 private:
  std::vector<Pair>* out_;
};

// Formats each pair with the job's WriteOutput.
class OutputEmitter : public Emitter {
 public:
  OutputEmitter(const Job& job, std::string* out) : job_(job), out_(out) {}
  void Emit(std::string_view key, std::string_view value) override {
    job_.WriteOutput(key, value, out_);
  }

 private:
  const Job& job_;
  std::string* out_;
};

class RangeValues : public ValueStream {
 public:
  using Iter = std::vector<Pair>::const_iterator;
  RangeValues(Iter begin, Iter end) : next_(begin), end_(end) {}
  bool Next(std::string_view* value) override {
    if (next_ == end_) return false;
    *value = (next_++)->second;
    return true;
  }

 private:
  Iter next_, end_;
};

// Stable-sorts `pairs` by key, bytewise, and calls fn(key, values) once per
// key, in key order.
template <typename Fn>
void ForEachKey(std::vector<Pair>& pairs, Fn&& fn) {
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const Pair& a, const Pair& b) { return a.first < b.first; });
  for (auto it = pairs.cbegin(); it != pairs.cend();) {
    auto next = std::find_if(it, pairs.cend(), [&](const Pair& p) { return p.first != it->first; });
    RangeValues values(it, next);
    fn(it->first, values);
    it = next;
  }
}

Status WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return Status::IOError("cannot write '" + path + "'");
  return Status::OK();
}

std::string PartPath(const std::string& dir, const char* prefix, size_t n) {
  char name[32];
  std::snprintf(name, sizeof(name), "%s%05zu", prefix, n);
  return (fs::path(dir) / name).string();
}

// Step 3 for one split: Map over its lines (and lookahead), then FinishMap.
Result<std::vector<Pair>> MapSplit(Job& job, const Split& split) {
  std::vector<Pair> output;
  PairEmitter emitter(&output);
  MR_RETURN_IF_ERROR(
      ForEachLine(split, job.lookahead_lines(), [&](std::string_view line, const LineInfo& info) {
        job.Map(line, info, emitter);
        return true;
      }));
  job.FinishMap(emitter);
  return output;
}

// The combiner over one map task's output.
std::vector<Pair> Combine(Job& job, std::vector<Pair>& output) {
  std::vector<Pair> combined;
  PairEmitter emitter(&combined);
  ForEachKey(output,
             [&](std::string_view key, ValueStream& values) { job.Combine(key, values, emitter); });
  return combined;
}

Status RunJob(std::string_view job_name, const std::vector<std::string>& inputs,
              const std::string& out_dir, const LocalRunOptions& options) {
  const int reducers = options.reducers;
  if (reducers < 0) return Status::InvalidArgument("reducers must be >= 0");
  if (options.split_bytes < 1) return Status::InvalidArgument("split_bytes must be >= 1");
  MR_ASSIGN_OR_RETURN(std::unique_ptr<Job> planner, MakeJob(job_name, options.params, options.env));
  std::error_code ec;
  if (fs::exists(fs::symlink_status(out_dir, ec))) {
    return Status::AlreadyExists("output directory '" + out_dir + "' already exists");
  }
  MR_ASSIGN_OR_RETURN(std::vector<Split> splits, ListSplits(inputs, options.split_bytes));

  Params params = options.params;
  if (reducers > 0) {
    MR_ASSIGN_OR_RETURN(std::vector<std::string> sample, SampleLines(splits));
    MR_RETURN_IF_ERROR(planner->Plan(sample, reducers, &params).WithContext("Plan"));
  }
  if (!fs::create_directories(out_dir, ec) || ec) {
    return Status::IOError("cannot create '" + out_dir + "': " + ec.message());
  }

  // Step 3: map tasks, in input order.
  std::vector<std::vector<Pair>> partitions(reducers);
  for (size_t m = 0; m < splits.size(); ++m) {
    MR_ASSIGN_OR_RETURN(std::unique_ptr<Job> job, MakeJob(job_name, params, options.env));
    MR_ASSIGN_OR_RETURN(std::vector<Pair> output, MapSplit(*job, splits[m]));
    if (reducers == 0) {
      std::string text;
      for (const Pair& p : output) job->WriteOutput(p.first, p.second, &text);
      MR_RETURN_IF_ERROR(WriteFile(PartPath(out_dir, "part-m-", m), text));
      continue;
    }
    if (job->has_combiner()) output = Combine(*job, output);
    for (Pair& p : output) {
      const int r = job->Partition(p.first, reducers);
      if (r < 0 || r >= reducers) {
        return Status::Internal("job '" + std::string(job_name) + "': Partition() gave " +
                                std::to_string(r) + " for " + std::to_string(reducers) +
                                " reducers");
      }
      partitions[r].push_back(std::move(p));
    }
  }

  // Step 4: reduce tasks.
  for (int r = 0; r < reducers; ++r) {
    MR_ASSIGN_OR_RETURN(std::unique_ptr<Job> job, MakeJob(job_name, params, options.env));
    std::string text;
    OutputEmitter out(*job, &text);
    ForEachKey(partitions[r],
               [&](std::string_view key, ValueStream& values) { job->Reduce(key, values, out); });
    job->FinishReduce(out);
    std::vector<Pair>().swap(partitions[r]);
    MR_RETURN_IF_ERROR(WriteFile(PartPath(out_dir, "part-", r), text));
  }
  return Status::OK();
}

}  // namespace

Status RunLocal(std::string_view job_name, const std::vector<std::string>& inputs,
                const std::string& out_dir, const LocalRunOptions& options) {
  try {
    return RunJob(job_name, inputs, out_dir, options);
  } catch (const std::exception& e) {  // a job's error (streaming: its command failed)
    return Status::Aborted("job '" + std::string(job_name) + "': " + e.what());
  }
}

}  // namespace mr::jobs
