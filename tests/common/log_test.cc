#include "common/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

// The numbers of the "line N" lines of `text`, in order.
std::vector<int> LineNumbers(const std::string& text) {
  std::vector<int> out;
  for (size_t at = text.find("line "); at != std::string::npos; at = text.find("line ", at + 1)) {
    out.push_back(std::atoi(text.c_str() + at + 5));
  }
  return out;
}

TEST_F(LogFileTest, RotatesAtMaxFileBytesAndKeepsMaxFilesOldOnes) {
  // [log] max_file_bytes: a file never grows past it; <file>.1 is the
  // newest rotated one; beyond max_files the oldest is deleted.
  const fs::path file = dir_ / "daemon.log";
  LogOptions options;
  options.max_file_bytes = 64 << 10;
  options.max_files = 2;
  ASSERT_TRUE(InitLogging("daemon", file.string(), options).ok());
  const std::string pad(60, 'x');
  const int kLines = 3000;  // ~300 KB: 4 to 5 files' worth
  for (int i = 0; i < kLines; ++i) spdlog::info("line {} {}", i, pad);
  spdlog::default_logger()->flush();
  ASSERT_TRUE(fs::exists(file.string() + ".1"));
  ASSERT_TRUE(fs::exists(file.string() + ".2"));
  EXPECT_FALSE(fs::exists(file.string() + ".3")) << "max_files = 2 keeps two rotated files";
  std::vector<int> numbers;
  for (const std::string& name : {file.string() + ".2", file.string() + ".1", file.string()}) {
    EXPECT_LE(fs::file_size(name), 64u << 10) << name;
    const std::vector<int> in_file = LineNumbers(ReadFile(name));
    numbers.insert(numbers.end(), in_file.begin(), in_file.end());
  }
  ASSERT_FALSE(numbers.empty());
  EXPECT_EQ(numbers.back(), kLines - 1);
  for (size_t i = 1; i < numbers.size(); ++i) {
    ASSERT_EQ(numbers[i], numbers[i - 1] + 1) << "a line lost or repeated across a rotation";
  }
  for (const std::string& name : {file.string() + ".2", file.string() + ".1"}) {
    EXPECT_GT(fs::file_size(name), (64u << 10) - 200) << name << " was rotated before it was full";
  }
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "a file made by rotation is private too";
}

TEST_F(LogFileTest, ZeroMaxFileBytesNeverRotates) {
  const fs::path file = dir_ / "daemon.log";
  LogOptions options;
  options.max_file_bytes = 0;
  ASSERT_TRUE(InitLogging("daemon", file.string(), options).ok());
  for (int i = 0; i < 2000; ++i) spdlog::info("line {} {}", i, std::string(60, 'x'));
  EXPECT_FALSE(fs::exists(file.string() + ".1"));
  EXPECT_GT(fs::file_size(file), 100u << 10);
}

TEST_F(LogFileTest, ReopenLogFileStartsANewFileAfterTheOldOneWasMoved) {
  // logrotate renames the file, then the daemon's SIGHUP handler calls this.
  const fs::path file = dir_ / "daemon.log";
  ASSERT_TRUE(InitLogging("daemon", file.string(), "info").ok());
  spdlog::info("before the move");
  fs::rename(file, dir_ / "daemon.log.1");
  spdlog::info("after the move, before reopening");
  ASSERT_TRUE(ReopenLogFile().ok());
  spdlog::info("after reopening");
  const std::string old_file = ReadFile(dir_ / "daemon.log.1");
  const std::string new_file = ReadFile(file);
  EXPECT_NE(old_file.find("before the move"), std::string::npos);
  EXPECT_NE(old_file.find("after the move, before reopening"), std::string::npos);
  EXPECT_EQ(new_file.find("before"), std::string::npos) << new_file;
  EXPECT_NE(new_file.find("after reopening"), std::string::npos) << new_file;
}

// Runs `body` with stderr going to `path`; returns what was written there.
template <typename Body>
std::string CaptureStderr(const fs::path& path, Body body) {
  std::fflush(stderr);
  const int saved = ::dup(2);
  FILE* capture = std::fopen(path.c_str(), "w");
  ::dup2(::fileno(capture), 2);
  body();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::fclose(capture);
  return ReadFile(path);
}

TEST_F(LogFileTest, UnderTheJournalLinesGoToStderrWithSyslogLevelsAndNoFile) {
  // systemd sets JOURNAL_STREAM to stderr's device:inode (systemd.exec(5));
  // the journal reads "<N>" as the level (sd-daemon(3)) and adds the time.
  fs::create_directories(dir_);
  const fs::path err = dir_ / "journal.txt";
  const fs::path file = dir_ / "logs" / "daemon.log";
  Status s;
  bool journal = false;
  const std::string out = CaptureStderr(err, [&] {
    struct stat st {};
    ::fstat(2, &st);
    const std::string stream = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    ::setenv("JOURNAL_STREAM", stream.c_str(), 1);
    journal = StderrIsJournal();
    s = InitLogging("daemon", file.string(), "debug");
    spdlog::debug("a debug line");
    spdlog::info("an info line");
    spdlog::warn("a warning line");
    spdlog::error("an error line");
    spdlog::default_logger()->flush();
    ::unsetenv("JOURNAL_STREAM");
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(journal);
  EXPECT_EQ(out,
            "<7>[daemon] a debug line\n<6>[daemon] an info line\n<4>[daemon] a warning line\n"
            "<3>[daemon] an error line\n");
  EXPECT_FALSE(fs::exists(file)) << "no log file under the journal";
}

TEST_F(LogFileTest, AJournalStreamThatIsNotStderrIsIgnored) {
  // A child of a systemd service inherits JOURNAL_STREAM even when its
  // stderr was redirected elsewhere; then the file is used as usual.
  const fs::path file = dir_ / "daemon.log";
  ::setenv("JOURNAL_STREAM", "1:1", 1);
  const bool journal = StderrIsJournal();
  Status s = InitLogging("daemon", file.string(), "info");
  ::unsetenv("JOURNAL_STREAM");
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(journal);
  spdlog::warn("to the file");
  EXPECT_NE(ReadFile(file).find("to the file"), std::string::npos);
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
