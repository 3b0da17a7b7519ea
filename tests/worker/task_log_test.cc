// TaskLog and TaskLogDir (worker/task_log.h): a log keeps its head and its
// tail within the cap, reads by stream offset the same while the attempt
// runs and after it closed, and the sweep removes the oldest jobs' logs.
#include "worker/task_log.h"

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include <gtest/gtest.h>

namespace mr::worker {
namespace {

namespace fs = std::filesystem;

class TaskLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("task-log-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Every byte of a log from `from`, in slices of `step`.
  static std::string ReadAll(const std::function<LogSlice(int64_t, int64_t)>& read, int64_t from, int64_t step) {
    std::string all;
    for (;;) {
      LogSlice s = read(from, step);
      all += s.data;
      from = s.next_offset;
      if (!s.more) return all;
    }
  }

  std::string dir_;
};

TEST_F(TaskLogTest, UnderTheCapEverythingIsKept) {
  TaskLogDir logs(dir_, 1024);
  auto log = logs.Create(7, true, 3, 1);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  (*log)->Line("map 3 attempt 1 starts");
  (*log)->Append("progress 50%\n");
  LogSlice running = (*log)->Read(0, 1 << 20);
  EXPECT_FALSE(running.done);
  EXPECT_NE(running.data.find("] map 3 attempt 1 starts\n"), std::string::npos);
  EXPECT_TRUE(running.data.ends_with("progress 50%\n"));
  (*log)->Close("succeeded");
  auto closed = logs.Read(7, true, 3, 1, 0, 1 << 20);
  ASSERT_TRUE(closed.ok());
  EXPECT_TRUE(closed->done);
  EXPECT_EQ(closed->data, running.data);
  EXPECT_EQ(closed->omitted_bytes, 0);
  EXPECT_TRUE(logs.Read(7, true, 3, 2, 0, 100).status().IsNotFound());
}

// 10 000 numbered lines through a 4 KiB cap: the first and the last lines
// survive, one line says how many bytes went, and reading in small slices
// from any offset gives what one big read gives, before and after Close.
TEST_F(TaskLogTest, OverTheCapTheHeadAndTheTailAreKept) {
  TaskLogDir logs(dir_, 4096);
  auto log = *logs.Create(8, false, 0, 0);
  std::string all;
  for (int i = 0; i < 10000; ++i) {
    const std::string line = "line " + std::to_string(i) + "\n";
    all += line;
    log->Append(line);
  }
  auto check = [&](const LogSlice& whole) {
    EXPECT_EQ(whole.total_bytes, static_cast<int64_t>(all.size()));
    EXPECT_EQ(whole.omitted_bytes, static_cast<int64_t>(all.size()) - 4096);
    EXPECT_TRUE(whole.data.starts_with(all.substr(0, 2048)));
    EXPECT_TRUE(whole.data.ends_with(all.substr(all.size() - 2048)));
    EXPECT_NE(whole.data.find(OmittedLine(whole.omitted_bytes, 4096)), std::string::npos);
    EXPECT_LT(whole.data.size(), 4096u + 200u);
  };
  const LogSlice live = log->Read(0, 1 << 20);
  check(live);
  EXPECT_EQ(ReadAll([&](int64_t f, int64_t n) { return log->Read(f, n); }, 0, 333), live.data);
  // A follower at offset 10 of the tail region gets the rest only.
  const int64_t near_end = live.total_bytes - 10;
  EXPECT_EQ(log->Read(near_end, 100).data, all.substr(all.size() - 10));
  log->Close("failed");
  auto closed = logs.Read(8, false, 0, 0, 0, 1 << 20);
  ASSERT_TRUE(closed.ok());
  check(*closed);
  EXPECT_EQ(closed->data, live.data);
  EXPECT_EQ(ReadAll([&](int64_t f, int64_t n) { return *logs.Read(8, false, 0, 0, f, n); }, 0, 777),
            live.data);
  EXPECT_LT(fs::file_size(dir_ + "/job-8/r-0-0.log"), 4096u + 200u);
}

TEST_F(TaskLogTest, SweepKeepsTheNewestJobsAndRunningOnes) {
  TaskLogDir logs(dir_, 1024);
  for (int64_t job = 1; job <= 5; ++job) {
    (*logs.Create(job, true, 0, 0))->Close("succeeded");
    // Distinct ages: job 1 the oldest.
    fs::last_write_time(dir_ + "/job-" + std::to_string(job),
                        fs::file_time_type::clock::now() - std::chrono::minutes(10 - job));
  }
  EXPECT_EQ(logs.Sweep(/*keep_ms=*/3600 * 1000, /*keep_jobs=*/3, /*running=*/{1}), 2);
  EXPECT_TRUE(fs::exists(dir_ + "/job-1"));  // running: kept
  EXPECT_FALSE(fs::exists(dir_ + "/job-2"));
  EXPECT_FALSE(fs::exists(dir_ + "/job-3"));
  EXPECT_TRUE(fs::exists(dir_ + "/job-4"));
  EXPECT_TRUE(fs::exists(dir_ + "/job-5"));
  // By age: older than 7 minutes goes (job 1, once it no longer runs).
  EXPECT_EQ(logs.Sweep(7 * 60 * 1000, 100, {}), 1);
  EXPECT_FALSE(fs::exists(dir_ + "/job-1"));
  EXPECT_TRUE(fs::exists(dir_ + "/job-4"));
  EXPECT_TRUE(fs::exists(dir_ + "/job-5"));
  // With a remover (the worker's), the logs are out of sight at once and
  // gone once it drained; the sweep sees nothing of them meanwhile.
  BackgroundRemover remover;
  EXPECT_EQ(logs.Sweep(3600 * 1000, 1, {}, &remover), 1);
  EXPECT_FALSE(fs::exists(dir_ + "/job-4"));
  EXPECT_EQ(logs.Sweep(3600 * 1000, 1, {}, &remover), 0);
  remover.Drain();
  size_t left = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++left;
  EXPECT_EQ(left, 1u) << "job-5 alone";
}

}  // namespace
}  // namespace mr::worker
