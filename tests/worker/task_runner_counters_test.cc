// RunMapTask and RunReduceTask's figures: raw output bytes, the counters
// (combine, spill, reduce groups), the progress a running map reports, and
// errors as Statuses (the fixture: task_runner_fixture.h).
#include "tests/worker/task_runner_fixture.h"

namespace mr::worker::task_runner_testing {
namespace {

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
}  // namespace mr::worker::task_runner_testing
