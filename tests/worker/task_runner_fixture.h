// The fixture of task_runner_test and task_runner_counters_test:
// generated inputs, splits, and "a cluster run by hand" (one map task per
// split, one reduce task per partition) beside RunLocal, the oracle.
#pragma once

#include "worker/task_runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "jobs/local_runner.h"
#include "tests/jobs/job_cases.h"

namespace mr::worker::task_runner_testing {

namespace fs = std::filesystem;
using mr::testing::RegisteredJobCase;
using mr::testing::RegisteredJobCases;

inline constexpr int64_t kSplitBytes = 10000;

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  ASSERT_TRUE(out.good()) << path;
}

// A ReadFn over a local file with pread; the fd lives as long as the fn.
inline jobs::LineReader::ReadFn PreadFn(const std::string& path) {
  auto fd = std::shared_ptr<int>(new int(::open(path.c_str(), O_RDONLY)), [](int* p) {
    if (*p >= 0) ::close(*p);
    delete p;
  });
  return [fd, path](int64_t offset, int64_t n, std::string* out) {
    out->resize(n);
    int64_t done = 0;
    while (done < n) {
      ssize_t got = ::pread(*fd, out->data() + done, n - done, offset + done);
      if (got <= 0) return Status::IOError("pread '" + path + "' failed");
      done += got;
    }
    return Status::OK();
  };
}

// English-like text with \t \v \f separators, CRLF endings, empty lines, some
// lines longer than a split, and no final newline.
inline std::string GenerateText(uint64_t seed, int lines) {
  static const std::vector<std::string> kWords = {"the",  "The",   "a",     "of",   "sing",
                                                  "ring", "thing", "going", "café", "1.0",
                                                  "ing",  "x",     "--",    "Ring", "singing"};
  static const std::vector<std::string> kSeparators = {" ", " ", " ", "  ", "\t", "\v", "\f"};
  std::mt19937_64 rng(seed);
  std::string text;
  for (int l = 0; l < lines; ++l) {
    const uint64_t kind = rng() % 200;
    const int words = kind < 10    ? 0
                      : kind == 10 ? 2000 + rng() % 500  // longer than a split
                      : kind < 30  ? 100 + rng() % 200
                                   : 1 + rng() % 14;
    for (int w = 0; w < words; ++w) {
      if (w > 0) text += kSeparators[rng() % kSeparators.size()];
      text += kWords[rng() % kWords.size()];
    }
    if (l + 1 < lines) text += rng() % 4 == 0 ? "\r\n" : "\n";
  }
  return text;
}

// FASTA with 1-3 base lines (so triples repeat), headers and empty lines.
inline std::string GenerateFasta(uint64_t seed, int lines) {
  std::mt19937_64 rng(seed);
  std::string text;
  for (int l = 0; l < lines; ++l) {
    const uint64_t kind = rng() % 60;
    if (kind == 0 || l == 0) {
      text += ">record " + std::to_string(l);
    } else if (kind != 1) {
      for (int n = 1 + rng() % 3; n > 0; --n) text += "ACGT"[rng() % 4];
    }
    if (l + 1 < lines) text += "\n";
  }
  return text;
}

struct Split {
  int64_t start, length;
};

inline std::vector<Split> Splits(int64_t file_length, int64_t split_bytes) {
  std::vector<Split> splits;
  for (int64_t s = 0; s < file_length; s += split_bytes) {
    splits.push_back({s, std::min(split_bytes, file_length - s)});
  }
  return splits;
}

class TaskRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/task_runner_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    text_ = dir_ + "/text.txt";
    fasta_ = dir_ + "/dna.fa";
    WriteFile(text_, GenerateText(7, 2000));
    WriteFile(fasta_, GenerateFasta(11, 40000));
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The params every task gets: resolved, plus what Plan() adds from the
  // sample RunLocal takes (the first lines of each split, ~2000 in all).
  jobs::Params Planned(const std::string& job, const std::string& file, jobs::Params params,
                       int reducers) {
    const jobs::JobInfo* info = jobs::FindJob(job);
    EXPECT_NE(info, nullptr);
    Result<jobs::Params> resolved = jobs::ResolveParams(*info, params);
    EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
    if (reducers == 0) return *resolved;
    const int64_t length = static_cast<int64_t>(fs::file_size(file));
    const std::vector<Split> splits = Splits(length, kSplitBytes);
    const size_t per_split = std::max<size_t>(1, 2000 / splits.size());  // < 2000 splits
    std::vector<std::string> sample;
    for (const Split& s : splits) {
      jobs::LineReader reader(PreadFn(file), length, s.start, s.start + s.length, 0);
      std::string_view line;
      int64_t offset;
      bool in_split;
      for (size_t taken = 0; taken < per_split; ++taken) {
        Result<bool> more = reader.Next(&line, &offset, &in_split);
        EXPECT_TRUE(more.ok());
        if (!more.ok() || !*more) break;
        sample.emplace_back(line);
      }
    }
    Result<std::unique_ptr<jobs::Job>> planner = jobs::MakeJob(job, params);
    EXPECT_TRUE(planner.ok()) << planner.status().ToString();
    EXPECT_TRUE((*planner)->Plan(sample, reducers, &params).ok());
    resolved = jobs::ResolveParams(*info, params);
    EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
    return *resolved;
  }

  MapTaskResult MapOne(const std::string& job, const jobs::Params& params, int reducers,
                       const std::string& file, Split split, int64_t sort_buffer,
                       const std::string& work_dir) {
    fs::create_directories(work_dir);
    MapTaskSpec spec;
    spec.job = job;
    spec.params = params;
    spec.reducers = reducers;
    spec.file = file;
    spec.file_length = static_cast<int64_t>(fs::file_size(file));
    spec.split_offset = split.start;
    spec.split_length = split.length;
    spec.sort_buffer_bytes = sort_buffer;
    spec.work_dir = work_dir;
    Result<MapTaskResult> r = RunMapTask(spec, PreadFn(file));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(*r) : MapTaskResult{};
  }

  // The whole job by hand: the part files' contents, in part order (for a
  // map-only job, one per map task).
  std::vector<std::string> RunTasks(const std::string& job, const std::string& file,
                                    const jobs::Params& user_params, int reducers,
                                    int64_t sort_buffer) {
    const jobs::Params params = Planned(job, file, user_params, reducers);
    const std::vector<Split> splits = Splits(fs::file_size(file), kSplitBytes);
    std::vector<MapTaskResult> maps;
    int64_t input_bytes = 0;
    for (size_t m = 0; m < splits.size(); ++m) {
      const std::string work = dir_ + "/" + job + "-map-" + std::to_string(reducers) + "-" +
                               std::to_string(sort_buffer) + "-" + std::to_string(m);
      maps.push_back(MapOne(job, params, reducers, file, splits[m], sort_buffer, work));
      input_bytes += maps.back().input_bytes;
    }
    EXPECT_EQ(input_bytes, static_cast<int64_t>(fs::file_size(file)));  // every line once
    int64_t spills = 0;
    for (const MapTaskResult& m : maps) spills += m.index.spills;
    if (reducers > 0 && sort_buffer <= 4096) {
      EXPECT_GT(spills, 0);  // the merge path ran
    }
    std::vector<std::string> parts;
    if (reducers == 0) {
      for (const MapTaskResult& m : maps) parts.push_back(ReadFile(m.output_path));
      return parts;
    }
    for (int r = 0; r < reducers; ++r) {
      std::vector<std::unique_ptr<SegmentReader>> inputs;
      int64_t raw = 0;
      for (const MapTaskResult& m : maps) {
        EXPECT_EQ(m.index.segments.size(), static_cast<size_t>(reducers));
        const SegmentInfo& seg = m.index.segments[r];
        raw += seg.raw_bytes;
        if (seg.compressed_bytes == 0) continue;
        Result<std::unique_ptr<SegmentReader>> in =
            SegmentReader::FromFile(m.output_path, seg.offset, seg.compressed_bytes);
        EXPECT_TRUE(in.ok()) << in.status().ToString();
        if (in.ok()) inputs.push_back(std::move(*in));
      }
      std::string out;
      int chunks = 0;
      Result<ReduceTaskResult> result = RunReduceTask(ReduceTaskSpec{job, params, r, reducers},
                                                      std::move(inputs), [&](std::string_view c) {
                                                        EXPECT_FALSE(c.empty());
                                                        ++chunks;
                                                        out.append(c);
                                                        return Status::OK();
                                                      });
      EXPECT_TRUE(result.ok()) << result.status().ToString();
      if (result.ok()) {
        EXPECT_EQ(result->output_bytes, static_cast<int64_t>(out.size()));
        EXPECT_EQ(result->input_raw_bytes, raw);
        EXPECT_LE(chunks, static_cast<int>(out.size() / kWriteChunkBytes) + 1);
      }
      parts.push_back(std::move(out));
    }
    return parts;
  }

  // RunLocal's part files for the same input, split size and reducers.
  std::vector<std::string> RunOracle(const std::string& job, const std::string& file,
                                     const jobs::Params& params, int reducers) {
    static int runs = 0;
    const std::string out = dir_ + "/local-" + std::to_string(runs++);
    jobs::LocalRunOptions options;
    options.reducers = reducers;
    options.split_bytes = kSplitBytes;
    options.params = params;
    Status s = jobs::RunLocal(job, {file}, out, options);
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(out)) names.push_back(e.path().string());
    std::sort(names.begin(), names.end());
    std::vector<std::string> parts;
    for (const std::string& n : names) parts.push_back(ReadFile(n));
    return parts;
  }

  std::string dir_, text_, fasta_;
};

struct JobCase {
  std::string job;
  bool dna;
  jobs::Params params;
};

// Every registered job (tests/jobs/job_cases.h): a job added to
// jobs/registry.cc is run here with no edit. Grep gets a pattern that
// matches the generated text; inputs other than DNA are text.
inline const std::vector<JobCase>& Cases() {
  static const std::vector<JobCase> kCases = [] {
    std::vector<JobCase> cases;
    for (const RegisteredJobCase& c : RegisteredJobCases()) {
      EXPECT_TRUE(c.problem.empty()) << c.problem;
      if (!c.problem.empty()) continue;
      jobs::Params params = c.params;
      if (c.job == "grep") params["pattern"] = "[a-z]*ing";
      cases.push_back({c.job, c.input == "dna", params});
    }
    return cases;
  }();
  return kCases;
}

// Part-by-part equality; on failure, the first differing byte.
inline void ExpectSameParts(const std::vector<std::string>& got, const std::vector<std::string>& want,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t p = 0; p < got.size(); ++p) {
    if (got[p] == want[p]) continue;
    size_t i = 0;
    while (i < got[p].size() && i < want[p].size() && got[p][i] == want[p][i]) ++i;
    ADD_FAILURE() << what << " part " << p << ": " << got[p].size() << " bytes, want "
                  << want[p].size() << "; first difference at byte " << i << ": got "
                  << ::testing::PrintToString(got[p].substr(i, 80)) << ", want "
                  << ::testing::PrintToString(want[p].substr(i, 80));
  }
}

}  // namespace mr::worker::task_runner_testing
