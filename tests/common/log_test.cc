#include "common/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

namespace mr {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int Occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class LogFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mr-log-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    previous_ = spdlog::default_logger();
  }
  void TearDown() override {
    spdlog::set_default_logger(previous_);
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(LogFileTest, WarningWithALogFileIsWrittenOnceAndNotToStderr) {
  // Issue 10 item 8b: a daemon logging to a file wrote each warning twice
  // (file + stderr, which local-cluster.sh keeps in logs/<name>.out).
  const fs::path file = dir_ / "logs" / "daemon.log";
  const fs::path err = dir_ / "stderr.txt";
  fs::create_directories(dir_);
  std::fflush(stderr);
  const int saved = ::dup(2);
  FILE* capture = std::fopen(err.c_str(), "w");
  ASSERT_NE(capture, nullptr);
  ::dup2(::fileno(capture), 2);
  Status s = InitLogging("daemon", file.string(), "info");
  spdlog::warn("disk nearly full: one warning line");
  spdlog::error("one error line");
  spdlog::default_logger()->flush();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::fclose(capture);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::string logged = ReadFile(file);
  const std::string on_stderr = ReadFile(err);
  EXPECT_EQ(Occurrences(logged, "one warning line"), 1) << logged;
  EXPECT_EQ(Occurrences(logged, "one error line"), 1) << logged;
  EXPECT_EQ(on_stderr, "") << "stderr got: " << on_stderr;
}

TEST_F(LogFileTest, LogFileAndItsDirectoryArePrivate) {
  // Item 8a: logs hold paths, peer addresses and errors; other local users
  // must not read them, whatever the umask of whoever started the daemon.
  const mode_t old_umask = ::umask(022);
  const fs::path file = dir_ / "logs" / "daemon.log";
  Status s = InitLogging("daemon", file.string(), "info");
  ::umask(old_umask);
  ASSERT_TRUE(s.ok()) << s.ToString();
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << std::oct << (st.st_mode & 0777);
  ASSERT_EQ(::stat(file.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << std::oct << (st.st_mode & 0777);
}

TEST_F(LogFileTest, AnExistingWorldReadableLogFileIsMadePrivate) {
  // A log file left by an older version (0644) is tightened when reopened.
  fs::create_directories(dir_);
  const fs::path file = dir_ / "old.log";
  std::ofstream(file) << "old line\n";
  fs::permissions(file, fs::perms(0644));
  ASSERT_TRUE(InitLogging("daemon", file.string(), "info").ok());
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << std::oct << (st.st_mode & 0777);
  EXPECT_NE(ReadFile(file).find("old line"), std::string::npos) << "appends, never truncates";
}

TEST(LogThrottleTest, FirstEventLogsThenOneLinePerIntervalWithTheCount) {
  LogThrottle throttle(1000ms);
  const auto t0 = LogThrottle::Clock::time_point{} + 1h;
  EXPECT_EQ(throttle.Tick(t0), 1);  // the first one is never held back
  for (int i = 1; i <= 99; ++i) EXPECT_EQ(throttle.Tick(t0 + i * 5ms), 0);
  // The next event after the interval reports itself and the 99 held back.
  EXPECT_EQ(throttle.Tick(t0 + 1000ms), 100);
  EXPECT_EQ(throttle.Tick(t0 + 1500ms), 0);
  EXPECT_EQ(throttle.Tick(t0 + 2000ms), 2);
}

TEST(LogThrottleTest, ZeroIntervalLogsEveryEvent) {
  LogThrottle throttle(0ms);
  const auto t0 = LogThrottle::Clock::time_point{} + 1h;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(throttle.Tick(t0), 1);
}

}  // namespace
}  // namespace mr
