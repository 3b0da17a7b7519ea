// RunMapTask and RunReduceTask against the oracle: for every job, a "cluster"
// run by hand (one map task per split, one reduce task per partition over
// segment r of every map output) must write exactly RunLocal's part files,
// byte for byte and part by part (same Partition(), and values reach Reduce
// in the same order: map order, then emission order). Splits are small so
// lines and Permu's triples cross split boundaries; a tiny sort buffer makes
// the map side spill and combine across runs.
#include "tests/worker/task_runner_fixture.h"

namespace mr::worker::task_runner_testing {
namespace {

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

}  // namespace
}  // namespace mr::worker::task_runner_testing
