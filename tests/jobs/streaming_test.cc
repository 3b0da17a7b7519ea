// Streaming jobs in mr-local's engine (RunLocalWithFiles): the example
// WordCounts in Python and awk (examples/streaming/) against the built-in
// wordcount, byte for byte, on generated text with every separator byte and
// on ../shared/data when present; Hadoop's line rule; and each way a user's
// command can fail, which must end the run with one line naming the
// command, what happened and its stderr tail.
#include "jobs/streaming.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "jobs/child_process.h"
#include "jobs/local_streaming.h"

namespace mr::jobs {
namespace {

namespace fs = std::filesystem;

std::string SourceDir() {
  const char* s = std::getenv("MR_SOURCE_DIR");
  return s != nullptr ? s : MR_TEST_SOURCE_DIR;
}
std::string Example(const std::string& name) { return SourceDir() + "/examples/streaming/" + name; }

std::string ReadAll(const std::string& dir) {
  std::vector<std::string> parts;
  for (const auto& e : fs::directory_iterator(dir)) parts.push_back(e.path().string());
  std::sort(parts.begin(), parts.end());
  std::string all;
  for (const auto& p : parts) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    all += ss.str();
  }
  return all;
}

class StreamingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/mr-streaming-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `job` with `flags` over `input`; the status, and the output in *out.
  Status Run(const std::string& job, const std::string& input, const StreamingFlags& flags,
             int reducers, std::string* out, Params params = {}, int64_t split = 64 << 10) {
    const std::string o = dir_ + "/out-" + std::to_string(runs_++);
    LocalRunOptions options;
    options.reducers = reducers;
    options.split_bytes = split;
    options.params = std::move(params);
    Status s = RunLocalWithFiles(job, {input}, o, flags, options);
    if (s.ok()) *out = ReadAll(o);
    return s;
  }

  // Text with every separator byte (space, \t, \f, \v, \r\n, lone \r),
  // UTF-8 and runs of separators, ~300 KiB.
  std::string MakeText() {
    std::mt19937 rng(7);
    const std::vector<std::string> words = {"the", "The", "the,", "caf\xc3\xa9", "a\xc2\xa0" "b", "x", "y", "zz"};
    const std::vector<std::string> seps = {" ", "  ", "\t", "\f", "\v", "\n", "\r\n", "\r", " \n"};
    std::string text;
    while (text.size() < 300000) {
      text += words[rng() % words.size()] + std::to_string(rng() % 500);
      text += seps[rng() % seps.size()];
    }
    const std::string path = dir_ + "/text.txt";
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::string dir_;
  int runs_ = 0;
};

// Debian's python3 (deploy/install-deps.sh), not a version manager's shim,
// which takes most of a second to start on a loaded machine.
StreamingFlags PythonWordCount() {
  return {"/usr/bin/python3 wc_mapper.py", "/usr/bin/python3 wc_reducer.py", "",
          {Example("wc_mapper.py"), Example("wc_reducer.py")}};
}
StreamingFlags AwkWordCount() {
  return {"LC_ALL=C awk -f wc_mapper.awk", "LC_ALL=C awk -f wc_reducer.awk", "",
          {Example("wc_mapper.awk"), Example("wc_reducer.awk")}};
}

TEST_F(StreamingTest, PythonAndAwkWordCountsMatchTheBuiltInOne) {
  const std::string text = MakeText();
  for (int reducers : {1, 3}) {
    std::string expected, python, awk;
    ASSERT_TRUE(Run("wordcount", text, {}, reducers, &expected, {}, 128 << 10).ok());
    Status s = Run("streaming", text, PythonWordCount(), reducers, &python, {}, 128 << 10);
    ASSERT_TRUE(s.ok()) << s.ToString();
    s = Run("streaming", text, AwkWordCount(), reducers, &awk, {}, 128 << 10);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_GT(expected.size(), 1000u);
    EXPECT_TRUE(python == expected) << "python: " << python.size() << " vs " << expected.size();
    EXPECT_TRUE(awk == expected) << "awk: " << awk.size() << " vs " << expected.size();
  }
}

// The mapper emits `word\t1`; the combiner (the reducer again) sums per
// spill; the output is still the built-in one's.
TEST_F(StreamingTest, ACombinerGivesTheSameOutput) {
  const std::string text = MakeText();
  std::string expected, got;
  ASSERT_TRUE(Run("wordcount", text, {}, 2, &expected).ok());
  StreamingFlags f{"LC_ALL=C awk 'BEGIN { FS = \"[ \\t\\f\\v]+\" } "
                   "{ for (i = 1; i <= NF; i++) if ($i != \"\") print $i \"\\t1\" }'",
                   "LC_ALL=C awk -f wc_reducer.awk", "LC_ALL=C awk -f wc_reducer.awk",
                   {Example("wc_reducer.awk")}};
  Status s = Run("streaming", text, f, 2, &got);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(got == expected);
}

TEST_F(StreamingTest, RealDataMatchesTheBuiltInWordCount) {
  const std::string data = fs::path(SourceDir()).parent_path() / "shared" / "data";
  if (!fs::exists(data)) GTEST_SKIP() << "../shared/data is not present";
  // Wikipedia (wiki markup, UTF-8, numbers that awk would take for numbers)
  // and a book; the whole of ../shared/data runs in tests/integration.
  for (const char* sub : {"wikipedia", "books/dickens_bleak_house.txt"}) {
    SCOPED_TRACE(sub);
    std::string expected, got;
    const std::string in = data + "/" + sub;
    ASSERT_TRUE(Run("wordcount", in, {}, 2, &expected, {}, 4 << 20).ok());
    Status s = Run("streaming", in, AwkWordCount(), 2, &got, {}, 4 << 20);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(got == expected) << got.size() << " vs " << expected.size();
  }
}

// Hadoop's rule: a line without a tab is a key with an empty value, and
// output is key TAB value; no reducer is the identity.
TEST_F(StreamingTest, ALineWithoutATabIsAKey) {
  const std::string in = dir_ + "/in.txt";
  std::ofstream(in) << "b\na\tx\ty\n";
  std::string got;
  ASSERT_TRUE(Run("streaming", in, {"cat", "", "", {}}, 1, &got).ok());
  EXPECT_EQ(got, "a\tx\ty\nb\t\n");
  ASSERT_TRUE(Run("streaming", in, {"cat", "", "", {}}, 0, &got).ok());
  EXPECT_EQ(got, "b\t\na\tx\ty\n");
}

// Each failure: Aborted, one line, the role, the command, the reason.
void ExpectFailure(const Status& s, const std::string& reason) {
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.IsAborted()) << s.ToString();
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(reason), std::string::npos) << s.message();
}

TEST_F(StreamingTest, ANonZeroExitFailsWithTheStderrTail) {
  const std::string in = MakeText();
  std::string got;
  Status s = Run("streaming", in, {"cat >/dev/null; echo first >&2; echo boom >&2; exit 3", "", "", {}}, 1, &got);
  ExpectFailure(s, "mapper `cat >/dev/null; echo first >&2; echo boom >&2; exit 3` exited with status 3; "
                   "stderr: first | boom");
  s = Run("streaming", in, {"cat", "exit 4", "", {}}, 1, &got);
  ExpectFailure(s, "reducer `exit 4` exited with status 4");
}

TEST_F(StreamingTest, AMissingOrNonExecutableCommandFails) {
  const std::string in = MakeText();
  std::string got;
  ExpectFailure(Run("streaming", in, {"./no-such-mapper", "", "", {}}, 1, &got),
                "exited with status 127 (command not found); stderr: ");
  const std::string script = dir_ + "/not-exec.sh";
  std::ofstream(script) << "#!/bin/sh\ncat\n";
  fs::permissions(script, fs::perms::owner_read | fs::perms::owner_write);
  ExpectFailure(Run("streaming", in, {"./not-exec.sh", "", "", {script}}, 1, &got),
                "exited with status 126 (not executable); stderr: ");
}

TEST_F(StreamingTest, ACrashALoopAndAnOverlongLineFail) {
  const std::string in = MakeText();
  std::string got;
  ExpectFailure(Run("streaming", in, {"kill -SEGV $$", "", "", {}}, 1, &got),
                "was killed by signal 11 (Segmentation fault)");
  // A loop that reads nothing: killed at the time limit.
  ExpectFailure(Run("streaming", in, {"while :; do :; done", "", "", {}}, 1, &got, {{"timeout_ms", "300"}}),
                "ran longer than the task time limit (300 ms");
  ExpectFailure(Run("streaming", in, {"head -c 9000000 /dev/zero | tr '\\0' a", "", "", {}}, 1, &got),
                "wrote a line longer than 8388608 bytes");
}

TEST_F(StreamingTest, BadFlagsAreRefused) {
  Params p;
  EXPECT_TRUE(ApplyStreamingFlags("wordcount", {"cat", "", "", {}}, &p).IsInvalidArgument());
  EXPECT_TRUE(ApplyStreamingFlags("streaming", {"cat", "", "", {dir_ + "/none"}}, &p).IsInvalidArgument());
  EXPECT_TRUE(ParseShippedFiles("a:123:x").status().IsInvalidArgument());
  EXPECT_TRUE(ParseShippedFiles("../a:" + std::string(64, 'a') + ":x").status().IsInvalidArgument());
  auto ok = ParseShippedFiles("a:" + std::string(64, 'a') + ":x;b:" + std::string(64, 'b') + ":-");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(FormatShippedFiles(*ok), "a:" + std::string(64, 'a') + ":x;b:" + std::string(64, 'b') + ":-");
  // The mapper is required.
  EXPECT_TRUE(MakeJob("streaming", {}).status().IsInvalidArgument());
}

// The FP table's key: the commands and the files' digests, nothing else.
TEST_F(StreamingTest, TheCodeHashIsTheCommandsAndFiles) {
  const JobInfo* info = FindJob("streaming");
  ASSERT_NE(info, nullptr);
  const Params a = {{"mapper", "cat"}, {"reducer", "wc"}};
  Params b = a;
  b["files_dir"] = "/.mr/jobs/7/files";
  Params c = a;
  c["reducer"] = "wc -l";
  EXPECT_EQ(CodeHashOf(*info, a), CodeHashOf(*info, b));
  EXPECT_NE(CodeHashOf(*info, a), CodeHashOf(*info, c));
  EXPECT_EQ(CodeHashOf(*info, a).size(), 16u);
}

}  // namespace
}  // namespace mr::jobs
