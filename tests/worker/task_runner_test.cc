// RunMapTask and RunReduceTask against the oracle: for every job, a "cluster"
// run by hand (one map task per split, one reduce task per partition over
// segment r of every map output) must write exactly RunLocal's part files,
// byte for byte and part by part (same Partition(), and values reach Reduce
// in the same order: map order, then emission order). Splits are small so
// lines and Permu's triples cross split boundaries; a tiny sort buffer makes
// the map side spill and combine across runs.
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

namespace mr::worker {
namespace {

namespace fs = std::filesystem;
using mr::testing::RegisteredJobCase;
using mr::testing::RegisteredJobCases;

constexpr int64_t kSplitBytes = 10000;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  ASSERT_TRUE(out.good()) << path;
}

// A ReadFn over a local file with pread; the fd lives as long as the fn.
jobs::LineReader::ReadFn PreadFn(const std::string& path) {
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
std::string GenerateText(uint64_t seed, int lines) {
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
std::string GenerateFasta(uint64_t seed, int lines) {
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

std::vector<Split> Splits(int64_t file_length, int64_t split_bytes) {
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
const std::vector<JobCase>& Cases() {
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
void ExpectSameParts(const std::vector<std::string>& got, const std::vector<std::string>& want,
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

TEST_F(TaskRunnerTest, MatchesRunLocalForEveryJob) {
  for (const JobCase& c : Cases()) {
    const std::string& file = c.dna ? fasta_ : text_;
    for (int reducers : {1, 3}) {
      const std::vector<std::string> want = RunOracle(c.job, file, c.params, reducers);
      ASSERT_EQ(want.size(), static_cast<size_t>(reducers));
      int64_t total = 0;
      for (const std::string& p : want) total += static_cast<int64_t>(p.size());
      EXPECT_GT(total, 0) << c.job;  // the data exercises the job
      // 1 MiB: one in-memory pass; 4 KiB: many spills, combined across runs.
      for (int64_t sort_buffer : {int64_t{1} << 20, int64_t{4096}}) {
        const std::string what = c.job + " with " + std::to_string(reducers) + " reducers, " +
                                 std::to_string(sort_buffer) + "-byte sort buffer";
        SCOPED_TRACE(what);
        ExpectSameParts(RunTasks(c.job, file, c.params, reducers, sort_buffer), want, what);
      }
    }
  }
}

TEST_F(TaskRunnerTest, CountingInAHashTableWritesTheSortedPathsMapOutput) {
  // The jobs whose combiner sums counts (CombinerKind::kSumCounts) write the
  // same bytes and statistics either way, in one pass or with spills.
  const std::vector<JobCase> counting = {{"wordcount", false, {}},
                                         {"grep", false, {{"pattern", "[a-z]*ing"}}},
                                         {"sequencecount", false, {}},
                                         {"permu", true, {{"combiner", "true"}}}};
  for (const JobCase& c : counting) {
    const std::string& file = c.dna ? fasta_ : text_;
    const int64_t length = static_cast<int64_t>(fs::file_size(file));
    for (int reducers : {1, 3}) {
      for (int64_t sort_buffer : {int64_t{1} << 20, int64_t{16} << 10}) {
        const std::string what = c.job + " with " + std::to_string(reducers) + " reducers, " +
                                 std::to_string(sort_buffer) + "-byte sort buffer";
        SCOPED_TRACE(what);
        MapTaskResult results[2];
        for (bool aggregate : {false, true}) {
          MapTaskSpec spec;
          spec.job = c.job;
          spec.params = c.params;
          spec.reducers = reducers;
          spec.file = file;
          spec.file_length = length;
          spec.split_length = length;
          spec.sort_buffer_bytes = sort_buffer;
          spec.aggregate_counts = aggregate;
          spec.work_dir = dir_ + "/count-" + std::to_string(aggregate);
          fs::create_directories(spec.work_dir);
          Result<MapTaskResult> r = RunMapTask(spec, PreadFn(file));
          ASSERT_TRUE(r.ok()) << r.status().ToString();
          results[aggregate] = std::move(*r);
        }
        const MapTaskResult &sorted = results[0], &counted = results[1];
        EXPECT_TRUE(ReadFile(counted.output_path) == ReadFile(sorted.output_path));
        EXPECT_EQ(counted.raw_output_bytes, sorted.raw_output_bytes);
        EXPECT_EQ(counted.records_out, sorted.records_out);
        EXPECT_EQ(counted.index.raw_bytes_in, sorted.index.raw_bytes_in);
        EXPECT_EQ(counted.index.records_in, sorted.index.records_in);
        ASSERT_EQ(counted.index.segments.size(), sorted.index.segments.size());
        for (size_t p = 0; p < counted.index.segments.size(); ++p) {
          EXPECT_EQ(counted.index.segments[p].raw_bytes, sorted.index.segments[p].raw_bytes);
          EXPECT_EQ(counted.index.segments[p].records, sorted.index.segments[p].records);
        }
        if (c.job == "wordcount" || c.job == "grep") {  // few distinct keys: fewer spills
          EXPECT_LE(counted.index.spills, sorted.index.spills);
        }
        EXPECT_GT(counted.records_out, 0);
      }
    }
  }
}

TEST_F(TaskRunnerTest, MapsOverBlocksOfLinesMatchRunLocalAndCountTheSameLines) {
  // Grep with a literal pattern is passed blocks of lines (MapKind::
  // kLineBlocks) and WordCount's words are counted a block at a time
  // (kCountWords): the same parts as RunLocal's line-by-line Map, and per
  // split the same lines and input bytes as a job mapped line by line (a
  // regular expression), CRLF endings and lines longer than a split included.
  for (const char* literal : {"ing", "the"}) {
    const jobs::Params params = {{"pattern", literal}};
    for (int reducers : {1, 3}) {
      for (int64_t sort_buffer : {int64_t{1} << 20, int64_t{4096}}) {
        const std::string what = std::string("grep ") + literal + " with " + std::to_string(reducers) +
                                 " reducers, " + std::to_string(sort_buffer) + "-byte sort buffer";
        ExpectSameParts(RunTasks("grep", text_, params, reducers, sort_buffer),
                        RunOracle("grep", text_, params, reducers), what);
      }
    }
  }
  const std::vector<Split> splits = Splits(fs::file_size(text_), kSplitBytes);
  for (size_t m = 0; m < splits.size(); ++m) {
    const std::string work = dir_ + "/lines-" + std::to_string(m);
    const MapTaskResult by_line =
        MapOne("grep", {{"pattern", "(?:ing)"}}, 2, text_, splits[m], 1 << 20, work + "-line");
    const MapTaskResult blocks =
        MapOne("grep", {{"pattern", "ing"}}, 2, text_, splits[m], 1 << 20, work + "-blocks");
    const MapTaskResult counted = MapOne("wordcount", {}, 2, text_, splits[m], 1 << 20, work + "-wc");
    EXPECT_EQ(blocks.records_in, by_line.records_in) << "split " << m;
    EXPECT_EQ(blocks.input_bytes, by_line.input_bytes) << "split " << m;
    // A block's matches go into the count table at once (EmitRepeated),
    // counted as the pairs they are.
    EXPECT_EQ(blocks.records_out, by_line.records_out) << "split " << m;
    EXPECT_EQ(blocks.raw_output_bytes, by_line.raw_output_bytes) << "split " << m;
    EXPECT_EQ(blocks.combine_records_in, by_line.combine_records_in) << "split " << m;
    EXPECT_EQ(counted.records_in, by_line.records_in) << "split " << m;
    EXPECT_EQ(counted.input_bytes, by_line.input_bytes) << "split " << m;
    EXPECT_EQ(ReadFile(blocks.output_path), ReadFile(by_line.output_path)) << "split " << m;
  }
}

TEST_F(TaskRunnerTest, MapOnlyWritesMapOutputLikeRunLocal) {
  for (const JobCase& c : Cases()) {
    const std::string& file = c.dna ? fasta_ : text_;
    const std::vector<std::string> want = RunOracle(c.job, file, c.params, 0);
    ExpectSameParts(RunTasks(c.job, file, c.params, 0, 1 << 20), want, c.job + " map-only");
  }
}

TEST_F(TaskRunnerTest, EmptySplitEmitsNothing) {
  // A zero-length split, and a split holding only the middle of a long line
  // (the line starts before it), own no lines.
  const std::string text = "first line\n" + std::string(5000, 'x') + "\nlast";
  const std::string file = dir_ + "/small.txt";
  WriteFile(file, text);
  for (Split split : {Split{0, 0}, Split{100, 1000}}) {
    for (int reducers : {0, 2}) {
      MapTaskResult r =
          MapOne("wordcount", {}, reducers, file, split, 64 << 20,
                 dir_ + "/empty-" + std::to_string(split.start) + "-" + std::to_string(reducers));
      EXPECT_EQ(r.records_in, 0);
      EXPECT_EQ(r.input_bytes, 0);
      EXPECT_EQ(r.raw_output_bytes, 0);
      EXPECT_EQ(r.records_out, 0);
      if (reducers == 0) {
        EXPECT_TRUE(r.index.segments.empty());
        EXPECT_EQ(ReadFile(r.output_path), "");
        continue;
      }
      ASSERT_EQ(r.index.segments.size(), 2u);
      for (const SegmentInfo& s : r.index.segments) EXPECT_EQ(s.records, 0);
    }
  }
  // A reduce task over no segments writes nothing and calls write never.
  Result<ReduceTaskResult> r =
      RunReduceTask(ReduceTaskSpec{"wordcount", {}, 0, 1}, {}, [](std::string_view) {
        ADD_FAILURE() << "write called";
        return Status::OK();
      });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->output_bytes, 0);
}

TEST_F(TaskRunnerTest, RawOutputBytesCountMapOutputBeforeTheCombiner) {
  // "a b a\nb a\n": Map emits (a,1) (b,1) (a,1) (b,1) (a,1): 5 pairs of 2 bytes.
  const std::string file = dir_ + "/words.txt";
  WriteFile(file, "a b a\nb a\n");
  const Split whole{0, 10};
  MapTaskResult with =
      MapOne("wordcount", {{"combiner", "true"}}, 1, file, whole, 64 << 20, dir_ + "/with");
  MapTaskResult without =
      MapOne("wordcount", {{"combiner", "false"}}, 1, file, whole, 64 << 20, dir_ + "/without");
  EXPECT_EQ(with.raw_output_bytes, 10);
  EXPECT_EQ(without.raw_output_bytes, 10);  // the combiner does not change the raw count
  EXPECT_EQ(with.index.raw_bytes_in, 10);
  EXPECT_EQ(with.records_in, 2);
  EXPECT_EQ(with.records_out, 5);
  EXPECT_EQ(with.input_bytes, 10);
  EXPECT_EQ(without.index.segments[0].raw_bytes, 10);
  EXPECT_EQ(with.index.segments[0].raw_bytes, 4);  // (a,3) (b,2)

  // On generated text, too: same raw count, smaller segments with the combiner.
  const int64_t length = static_cast<int64_t>(fs::file_size(text_));
  MapTaskResult big_with =
      MapOne("wordcount", {}, 3, text_, {0, length}, 64 << 20, dir_ + "/big-with");
  MapTaskResult big_without = MapOne("wordcount", {{"combiner", "false"}}, 3, text_, {0, length},
                                     64 << 20, dir_ + "/big-without");
  EXPECT_GT(big_with.raw_output_bytes, 0);
  EXPECT_EQ(big_with.raw_output_bytes, big_without.raw_output_bytes);
  int64_t seg_with = 0, seg_without = 0;
  for (const SegmentInfo& s : big_with.index.segments) seg_with += s.raw_bytes;
  for (const SegmentInfo& s : big_without.index.segments) seg_without += s.raw_bytes;
  EXPECT_EQ(seg_without, big_without.raw_output_bytes);
  EXPECT_LT(seg_with, seg_without);
  EXPECT_EQ(big_with.input_bytes, length);
}

// Counters (docs/logs-and-counters.md): the combiner's records in and out
// whichever way it combines (the count table or Combine calls), records
// written to disk at every spill and merge, and a reduce's key groups.
TEST_F(TaskRunnerTest, CountsCombineSpillAndReduceGroups) {
  const std::string file = dir_ + "/counted.txt";
  WriteFile(file, "a b a\nb a\n");  // 5 pairs, 2 keys
  struct Way {
    jobs::Params params;
    bool aggregate;
    int64_t combine_in, combine_out, spilled;
  };
  for (const Way& w : {Way{{}, true, 5, 2, 2}, Way{{}, false, 5, 2, 2}, Way{{{"combiner", "false"}}, true, 0, 0, 5}}) {
    MapTaskSpec spec;
    spec.job = "wordcount";
    spec.params = w.params;
    spec.file = file;
    spec.file_length = spec.split_length = 10;
    spec.aggregate_counts = w.aggregate;
    spec.work_dir = dir_ + "/counted-" + std::to_string(w.aggregate) + std::to_string(w.params.size());
    fs::create_directories(spec.work_dir);
    Result<MapTaskResult> r = RunMapTask(spec, PreadFn(file));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    SCOPED_TRACE(spec.work_dir);
    EXPECT_EQ(r->combine_records_in, w.combine_in);
    EXPECT_EQ(r->combine_records_out, w.combine_out);
    EXPECT_EQ(r->spilled_records, w.spilled);

    auto segment = SegmentReader::FromFile(r->output_path, r->index.segments[0].offset,
                                           r->index.segments[0].compressed_bytes);
    ASSERT_TRUE(segment.ok());
    std::vector<std::unique_ptr<SegmentReader>> inputs;
    inputs.push_back(std::move(*segment));
    Result<ReduceTaskResult> reduced = RunReduceTask(ReduceTaskSpec{"wordcount", {}, 0, 1}, std::move(inputs),
                                                     [](std::string_view) { return Status::OK(); });
    ASSERT_TRUE(reduced.ok()) << reduced.status().ToString();
    EXPECT_EQ(reduced->input_groups, 2);
    EXPECT_EQ(reduced->input_records, w.spilled);
  }
  // With spills (a 16 KiB buffer): each run's records, the merge's and the
  // output's are all spilled records; every pair went into the combiner.
  const int64_t length = static_cast<int64_t>(fs::file_size(text_));
  for (bool aggregate : {false, true}) {
    MapTaskSpec spec;
    spec.job = "wordcount";
    spec.reducers = 2;
    spec.file = text_;
    spec.file_length = spec.split_length = length;
    spec.sort_buffer_bytes = 16 << 10;
    spec.aggregate_counts = aggregate;
    spec.work_dir = dir_ + "/spilled-" + std::to_string(aggregate);
    fs::create_directories(spec.work_dir);
    Result<MapTaskResult> r = RunMapTask(spec, PreadFn(text_));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    int64_t final_records = 0;
    for (const SegmentInfo& s : r->index.segments) final_records += s.records;
    if (!aggregate) ASSERT_GT(r->index.spills, 1);
    if (r->index.spills > 1) EXPECT_GT(r->spilled_records, final_records);
    EXPECT_GE(r->spilled_records, final_records);
    EXPECT_GE(r->combine_records_in, r->records_out);
    EXPECT_GE(r->combine_records_out, final_records);
  }
}

// A running map reports its output per partition before every read of
// input (about every MiB): the figures only grow, and end at or below the
// finished segments' sizes (for a job without a combiner, just below: the
// last read's records come after the last report).
TEST_F(TaskRunnerTest, ProgressReportsPartitionBytesAsTheMapRuns) {
  const std::string file = dir_ + "/big.txt";
  WriteFile(file, GenerateText(3, 60000));
  const int64_t length = static_cast<int64_t>(fs::file_size(file));
  ASSERT_GT(length, 3 << 20);
  for (const std::string job : {"sort", "wordcount"}) {
    SCOPED_TRACE(job);
    const std::string work = dir_ + "/progress-" + job;
    fs::create_directories(work);
    MapTaskSpec spec;
    spec.job = job;
    spec.params = Planned(job, file, {}, 2);
    spec.reducers = 2;
    spec.file = file;
    spec.file_length = length;
    spec.split_length = length;
    spec.work_dir = work;
    std::vector<std::vector<int64_t>> reports;
    spec.progress = [&](const std::vector<int64_t>& p) { reports.push_back(p); };
    Result<MapTaskResult> r = RunMapTask(spec, PreadFn(file));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_GE(reports.size(), 3u);
    EXPECT_EQ(reports.front(), (std::vector<int64_t>{0, 0}));  // before the first read
    for (size_t i = 1; i < reports.size(); ++i) {
      ASSERT_EQ(reports[i].size(), 2u);
      for (size_t p = 0; p < 2; ++p) EXPECT_GE(reports[i][p], reports[i - 1][p]);
    }
    for (size_t p = 0; p < 2; ++p) {
      EXPECT_GT(reports.back()[p], 0);
      if (job == "sort") EXPECT_LE(reports.back()[p], r->index.segments[p].raw_bytes);
    }
  }
}

TEST_F(TaskRunnerTest, ErrorsAreStatuses) {
  MapTaskSpec spec;
  spec.job = "nosuchjob";
  spec.work_dir = dir_;
  EXPECT_TRUE(RunMapTask(spec, PreadFn(text_)).status().IsInvalidArgument());
  spec.job = "wordcount";
  spec.file = text_;
  spec.file_length = static_cast<int64_t>(fs::file_size(text_));
  spec.split_length = 100;
  auto failing = [](int64_t, int64_t, std::string*) { return Status::IOError("disk gone"); };
  EXPECT_TRUE(RunMapTask(spec, failing).status().IsIOError());
  spec.reducers = 0;
  EXPECT_TRUE(RunMapTask(spec, failing).status().IsIOError());
  EXPECT_FALSE(fs::exists(dir_ + "/map-output.txt.tmp"));
  EXPECT_FALSE(fs::exists(dir_ + "/map-output.txt"));

  // A write error stops the reduce task and is returned.
  MapTaskResult m =
      MapOne("wordcount", {}, 1, text_, {0, spec.file_length}, 64 << 20, dir_ + "/werr");
  const SegmentInfo& seg = m.index.segments[0];
  std::vector<std::unique_ptr<SegmentReader>> inputs;
  Result<std::unique_ptr<SegmentReader>> in =
      SegmentReader::FromFile(m.output_path, seg.offset, seg.compressed_bytes);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  inputs.push_back(std::move(*in));
  Result<ReduceTaskResult> r =
      RunReduceTask(ReduceTaskSpec{"wordcount", {}, 0, 1}, std::move(inputs),
                    [](std::string_view) { return Status::IOError("dfs full"); });
  EXPECT_TRUE(r.status().IsIOError());
  EXPECT_TRUE(RunReduceTask(ReduceTaskSpec{"wordcount", {}, 3, 3}, {},
                            [](std::string_view) { return Status::OK(); })
                  .status()
                  .IsInvalidArgument());
}

}  // namespace
}  // namespace mr::worker
