// Bad requests the master refuses with one clear line, against a real local
// cluster driven by mrctl: a replication no block could ever reach, and a
// job whose input holds no file (issue 10).
#include "tests/integration/cluster_fixture.h"

namespace mr::testing {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

// A small local text file, removed at the end of the test.
class LocalFile {
 public:
  explicit LocalFile(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() /
             ("mr-it-input-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++)))
                .string();
    std::ofstream(path_) << text;
  }
  ~LocalFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

// One line on stderr (mrctl's error), nothing else.
int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// `dfs put -r N` above the workers of the cluster file used to be accepted,
// and its blocks stayed under-replicated forever. Now it is refused, as is
// a negative one and one above [dfs] max_replication; one above the live
// workers only is accepted and topped up when the worker comes back.
TEST(InputChecksTest, ReplicationBeyondTheClusterIsRefused) {
  LocalCluster c(3, 2, "--block-size 1048576 --replication 2 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  LocalFile file("a line of text\n");

  const std::pair<std::string, std::string> refused[] = {
      {"100000",
       "replication 100000 is above the cluster's maximum of 512 ([dfs] max_replication)"},
      {"4", "replication 4 is above the 3 workers of the cluster"}};
  for (const auto& [r, why] : refused) {
    CommandResult put = c.Mrctl("dfs put -r " + r + " " + Quote(file.path()) + " /r" + r);
    EXPECT_NE(put.exit_code, 0) << "put -r " << r << " was accepted";
    EXPECT_NE(put.err.find(why), std::string::npos) << put.err;
    EXPECT_EQ(Lines(put.err), 1) << put.err;
    EXPECT_NE(c.Mrctl("dfs stat /r" + r).exit_code, 0) << "/r" << r << " appeared";
  }
  CommandResult negative = c.Mrctl("dfs put -r -1 " + Quote(file.path()) + " /neg");
  EXPECT_NE(negative.exit_code, 0);
  EXPECT_NE(c.Mrctl("dfs stat /neg").exit_code, 0) << "/neg appeared";

  // As many as there are workers is fine.
  CommandResult three = c.Mrctl("dfs put -r 3 " + Quote(file.path()) + " /r3");
  ASSERT_EQ(three.exit_code, 0) << three.err;
  EXPECT_TRUE(WaitFor(
      [&] { return c.MrctlJson("dfs stat --json /r3")["blocks"][0]["replicas"].size() == 3; },
      20s));

  // With a worker down, -r 3 is still accepted; the block gets its third
  // replica once the worker is back.
  ASSERT_EQ(c.Script("stop w3").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return c.LiveWorkers() == 2; }, 20s));
  CommandResult degraded = c.Mrctl("dfs put -r 3 " + Quote(file.path()) + " /r3b");
  ASSERT_EQ(degraded.exit_code, 0) << degraded.err;
  EXPECT_EQ(c.MrctlJson("dfs stat --json /r3b")["replication"], 3);
  ASSERT_EQ(c.Script("start w3").exit_code, 0);
  EXPECT_TRUE(WaitFor(
      [&] { return c.MrctlJson("dfs stat --json /r3b")["blocks"][0]["replicas"].size() == 3; },
      30s));

  // [dfs] max_replication caps it below the cluster's size.
  ASSERT_EQ(
      Shell("sed -i 's/^\\[dfs\\]$/[dfs]\\nmax_replication = 2/' " + Quote(c.config())).exit_code,
      0);
  ASSERT_EQ(c.Script("stop master").exit_code, 0);
  ASSERT_EQ(c.Script("start master").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return c.LiveWorkers() == 3; }, 20s));
  CommandResult capped = c.Mrctl("dfs put -r 3 " + Quote(file.path()) + " /capped");
  EXPECT_NE(capped.exit_code, 0);
  EXPECT_NE(
      capped.err.find("replication 3 is above the cluster's maximum of 2 ([dfs] max_replication)"),
      std::string::npos)
      << capped.err;
  EXPECT_EQ(c.Mrctl("dfs put -r 2 " + Quote(file.path()) + " /two").exit_code, 0);
}

// `job run -i DIR` on a directory with no file used to "succeed" with 0
// maps. Now the master refuses it, for every client, with one line.
TEST(InputChecksTest, JobInputWithNoFileIsRefused) {
  LocalCluster c(2, 1, "--block-size 65536 --replication 1 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  LocalFile file("one two\n");
  for (const char* dir : {"/empty", "/only-dirs/sub", "/hidden"}) {
    ASSERT_EQ(c.Mrctl("dfs mkdir -p " + std::string(dir)).exit_code, 0);
  }
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(file.path()) + " /hidden/_SUCCESS").exit_code, 0);
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(file.path()) + " /only-dirs/sub/deeper.txt").exit_code, 0);

  for (const char* in : {"/empty", "/only-dirs", "/hidden", "/"}) {
    const std::string out = "/out" + std::string(in == std::string("/") ? "/root" : in);
    CommandResult run =
        c.Mrctl("job run wordcount -i " + std::string(in) + " -o " + out + " --wait");
    EXPECT_NE(run.exit_code, 0) << in << " was accepted: " << run.out;
    EXPECT_NE(run.err.find("input '" + std::string(in) + "' contains no files"), std::string::npos)
        << in << ": " << run.err;
    EXPECT_EQ(Lines(run.err), 1) << run.err;
    EXPECT_NE(c.Mrctl("dfs stat " + out).exit_code, 0) << out << " appeared";
  }
  CommandResult missing = c.Mrctl("job run wordcount -i /nope -o /out/nope");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("input '/nope' does not exist"), std::string::npos) << missing.err;
  // No job was recorded for any of them.
  EXPECT_EQ(c.MrctlJson("job list --json").size(), 0u);

  // A directory with a file still runs.
  CommandResult ok = c.Mrctl("job run wordcount -i /only-dirs/sub -o /out/ok --wait");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

}  // namespace
}  // namespace mr::testing
