// The client people know (issue 14, item 4) against a real local cluster:
// the `hdfs dfs` verbs (put and get of directories, ls -R, mv, cp, du, tail,
// setrep -w, test), the hidden /.mr directory, progress lines, and `job
// wait` on a running and a finished job. Bytes are compared with the local
// files (sha256sum, cmp, diff -r, tail -c), sizes with find/awk.
#include <fstream>
#include <regex>

#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kCluster = "--block-size 1048576 --replication 2 --heartbeat-ms 200";

class DfsVerbsTest : public JobTest {
 protected:
  // A local tree: a.txt (3 MiB, 3 blocks), sub/b.xml, sub/c.bin, an empty
  // directory, and a file in a directory two levels down.
  std::string MakeTree() {
    const std::string dir = work_ + "/tree";
    std::filesystem::create_directories(dir + "/sub/deeper");
    std::filesystem::create_directories(dir + "/empty");
    std::filesystem::rename(Generate("text", "3M", 3), dir + "/a.txt");
    std::filesystem::rename(Generate("web", "200K", 4), dir + "/sub/b.xml");
    std::ofstream(dir + "/sub/c.bin") << "ten bytes\n";
    std::filesystem::rename(Generate("dna", "70K", 5), dir + "/sub/deeper/d.fa");
    return dir;
  }
  static int64_t LocalBytes(const std::string& dir) {
    return std::stoll(Shell("find " + Quote(dir) + " -type f -printf '%s\\n' | awk '{s += $1} END {print s + 0}'").out);
  }
};

TEST_F(DfsVerbsTest, DirectoriesRoundTripAndTheVerbsAgreeWithLocalTools) {
  LocalCluster c(3, 2, kCluster);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string tree = MakeTree();

  // put of a directory: the whole tree, empty directories included.
  CommandResult r = c.Mrctl("dfs put " + Quote(tree) + " /t");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json listed = c.MrctlJson("dfs ls -R --json /t");
  std::set<std::string> paths;
  for (const auto& e : listed) paths.insert(e["path"].get<std::string>());
  EXPECT_EQ(paths, (std::set<std::string>{"a.txt", "empty", "sub", "sub/b.xml", "sub/c.bin", "sub/deeper",
                                          "sub/deeper/d.fa"}));
  EXPECT_EQ(CatSha(c, "/t/sub/deeper/d.fa"), Sha256OfFile(tree + "/sub/deeper/d.fa"));

  // get of a directory: the same tree, byte for byte (diff -r), and no
  // partial directory left behind.
  r = c.Mrctl("dfs get /t " + Quote(work_ + "/back"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Shell("diff -r " + Quote(tree) + " " + Quote(work_ + "/back") + " && echo same");
  EXPECT_EQ(r.out, "same\n") << r.out << r.err;
  EXPECT_FALSE(std::filesystem::exists(work_ + "/back.mrctl-partial"));
  // Into an existing local directory: under the DFS name; never over an
  // existing one.
  std::filesystem::create_directories(work_ + "/into");
  r = c.Mrctl("dfs get /t/sub " + Quote(work_ + "/into"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Shell("diff -r " + Quote(tree + "/sub") + " " + Quote(work_ + "/into/sub") + " && echo same").out,
            "same\n");
  r = c.Mrctl("dfs get /t/sub " + Quote(work_ + "/into"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "mrctl: '" + work_ + "/into/sub' already exists\n");
  // getmerge: the directory's files concatenated in name order.
  ASSERT_EQ(c.Mrctl("dfs getmerge /t/sub " + Quote(work_ + "/merged")).exit_code, 0);
  EXPECT_EQ(Shell("cat " + Quote(tree + "/sub/b.xml") + " " + Quote(tree + "/sub/c.bin") + " | sha256sum | cut -d' ' -f1").out,
            Sha256OfFile(work_ + "/merged"));

  // ls: kind, replication, size, time, type, full path, as hdfs shows them.
  r = c.Mrctl("dfs ls /t");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n?- +2 +3145728 \d{4}-\d\d-\d\d \d\d:\d\d text /t/a.txt\n)")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(d +- +0 \d{4}-\d\d-\d\d \d\d:\d\d +/t/sub\n)"))) << r.out;

  // du: bytes, bytes with every replica (replication 2), per entry and -s.
  const int64_t bytes = LocalBytes(tree);
  r = c.Mrctl("dfs du -s /t");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::to_string(bytes) + std::string(13 - std::to_string(bytes).size(), ' ') +
                       std::to_string(2 * bytes) + std::string(13 - std::to_string(2 * bytes).size(), ' ') + "/t\n");
  r = c.Mrctl("dfs du /t");
  EXPECT_NE(r.out.find(std::to_string(LocalBytes(tree + "/sub"))), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/t/sub\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/t/empty\n"), std::string::npos) << r.out;
  EXPECT_NE(c.Mrctl("dfs du -s -h /t").out.find("MiB"), std::string::npos);

  // tail: the last KiB, as tail -c prints it.
  r = Shell("bash -c " + Quote(Mrctl() + " --config " + Quote(c.config()) + " dfs tail /t/a.txt | cmp - <(tail -c 1024 " +
                               Quote(tree + "/a.txt") + ") && echo same"));
  EXPECT_EQ(r.out, "same\n") << r.err;
  EXPECT_EQ(c.Mrctl("dfs tail /t/sub/c.bin").out, "ten bytes\n");

  // test: exit codes, no output.
  for (const auto& [args, want] : std::vector<std::pair<std::string, int>>{
           {"-e /t/a.txt", 0}, {"-e /nope", 1}, {"-d /t/sub", 0}, {"-d /t/a.txt", 1},
           {"-f /t/a.txt", 0}, {"-f /t/sub", 1}, {"-e /t/empty", 0}}) {
    r = c.Mrctl("dfs test " + args);
    EXPECT_EQ(r.exit_code, want) << args << ": " << r.err;
    EXPECT_EQ(r.out + r.err, "") << args;
  }

  // mv: a rename, and into a directory; the bytes follow.
  ASSERT_EQ(c.Mrctl("dfs mv /t/a.txt /t/moved.txt").exit_code, 0);
  EXPECT_EQ(c.Mrctl("dfs test -e /t/a.txt").exit_code, 1);
  EXPECT_EQ(CatSha(c, "/t/moved.txt"), Sha256OfFile(tree + "/a.txt"));
  ASSERT_EQ(c.Mrctl("dfs mv /t/sub/c.bin /t/empty").exit_code, 0);
  EXPECT_EQ(c.Mrctl("dfs cat /t/empty/c.bin").out, "ten bytes\n");
  r = c.Mrctl("dfs mv /t/moved.txt /t/sub/b.xml");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "mrctl: '/t/sub/b.xml' already exists\n");

  // cp: a file (same replication and block size) and a whole directory.
  ASSERT_EQ(c.Mrctl("dfs cp /t/moved.txt /copy.txt").exit_code, 0);
  EXPECT_EQ(CatSha(c, "/copy.txt"), Sha256OfFile(tree + "/a.txt"));
  json copy = c.MrctlJson("dfs stat --json /copy.txt");
  EXPECT_EQ(copy["replication"], 2);
  EXPECT_EQ(copy["blocks"].size(), 3u);
  ASSERT_EQ(c.Mrctl("dfs cp /t/sub /subcopy").exit_code, 0);
  EXPECT_EQ(CatSha(c, "/subcopy/deeper/d.fa"), Sha256OfFile(tree + "/sub/deeper/d.fa"));
  r = c.Mrctl("dfs cp /t/moved.txt /copy.txt");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("mrctl: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("already exists"), std::string::npos) << r.err;

  // setrep -w: up to 3 replicas on every block, then down to 1.
  r = c.Mrctl("dfs setrep -w 3 /copy.txt --timeout 120");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Replication 3 set: /copy.txt\n");
  for (const auto& b : c.MrctlJson("dfs stat --json /copy.txt")["blocks"]) EXPECT_EQ(b["replicas"].size(), 3u);
  ASSERT_EQ(c.Mrctl("dfs setrep -w 1 /t --timeout 120").exit_code, 0);
  for (const auto& b : c.MrctlJson("dfs stat --json /t/moved.txt")["blocks"]) EXPECT_EQ(b["replicas"].size(), 1u);
  EXPECT_EQ(c.MrctlJson("dfs stat --json /t/sub/b.xml")["replication"], 1);
  EXPECT_EQ(CatSha(c, "/t/moved.txt"), Sha256OfFile(tree + "/a.txt"));
  r = c.Mrctl("dfs setrep 4 /copy.txt");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("above the 3 workers"), std::string::npos) << r.err;
}

// Progress: a redrawn bar on a terminal (script(1) gives mrctl a pty), one
// plain line per interval elsewhere ($MR_PROGRESS_INTERVAL_MS=0: every
// update), nothing with --quiet; stdout untouched.
TEST_F(DfsVerbsTest, ProgressOnATerminalAndInALog) {
  LocalCluster c(2, 1, kCluster);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("text", "3M", 9);
  const std::string mrctl = Mrctl() + " --config " + Quote(c.config());
  CommandResult r = Shell("script -qec " + Quote(mrctl + " dfs put " + Quote(file) + " /p.txt") + " /dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("100%  put /p.txt: 3.0 MiB of 3.0 MiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\r["), std::string::npos) << r.out;

  r = Shell("{ MR_PROGRESS_INTERVAL_MS=0 " + mrctl + " dfs cat /p.txt | sha256sum | cut -d' ' -f1; }");
  EXPECT_EQ(r.out, Sha256OfFile(file));
  EXPECT_NE(r.err.find("mrctl: cat /p.txt: 100% 3.0 MiB of 3.0 MiB"), std::string::npos) << r.err;
  r = Shell("MR_PROGRESS_INTERVAL_MS=0 " + mrctl + " --quiet dfs get /p.txt " + Quote(work_ + "/g"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(Sha256OfFile(work_ + "/g"), Sha256OfFile(file));
  r = Shell("MR_PROGRESS_INTERVAL_MS=0 " + Mrctl() + " gen dna " + Quote(work_ + "/d.fa") + " --size 3M");
  EXPECT_NE(r.err.find("mrctl: gen " + work_ + "/d.fa: "), std::string::npos) << r.err;
}

// /.mr (jobs' temporary outputs) is hidden from ls and du unless asked;
// `job wait` follows a running job to its end and a finished one at once;
// a running job shows its elapsed time; mv of its input is refused;
// cluster status shows the policy and the slots in use. The job cannot
// start while every worker is decommissioned, so "running" is certain.
TEST_F(DfsVerbsTest, JobWaitAndMvOfARunningJobsInput) {
  LocalCluster c(2, 1, kCluster);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string text = Generate("text", "2M", 11);
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(text) + " /in.txt").exit_code, 0);
  for (const char* w : {"w1", "w2"}) ASSERT_EQ(c.Mrctl(std::string("cluster decommission ") + w).exit_code, 0);
  CommandResult r = c.Mrctl("job run wordcount -i /in.txt -o /out -r 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const int64_t id = json::parse(r.out)["id"].get<int64_t>();
  const std::string ids = std::to_string(id);

  r = c.Mrctl("job show " + ids);
  EXPECT_NE(r.out.find("running for "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("JTT 0.0 s"), std::string::npos) << r.out;
  EXPECT_GE(c.MrctlJson("job show --json " + ids)["elapsed_ms"].get<int64_t>(), 0);
  r = c.Mrctl("dfs mv /in.txt /elsewhere.txt");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "mrctl: job " + ids + " is running and reads or writes '/in.txt': move it after the job ends (mrctl job wait " + ids + ")\n");
  r = c.Mrctl("cluster status");
  EXPECT_NE(r.out.find("scheduler fifo; slots in use: maps 0/4, reduces 0/2"), std::string::npos) << r.out;

  // /.mr exists now (the job's temporary output) but ls and du leave it out.
  EXPECT_EQ(c.Mrctl("dfs test -d /.mr").exit_code, 0);
  EXPECT_EQ(c.Mrctl("dfs ls /").out.find(".mr"), std::string::npos);
  EXPECT_EQ(c.Mrctl("dfs du /").out.find(".mr"), std::string::npos);
  EXPECT_NE(c.Mrctl("dfs ls -a /").out.find("/.mr"), std::string::npos);
  EXPECT_NE(c.Mrctl("dfs ls -R -a /").out.find("/.mr/jobs/" + ids + "/out"), std::string::npos);

  // job wait, attached while the job runs (its progress lines say so), then
  // the workers come back and it ends.
  const std::string wait_out = work_ + "/wait.out", wait_err = work_ + "/wait.err";
  const std::string mrctl = Mrctl() + " --config " + Quote(c.config());
  Shell("(MR_PROGRESS_INTERVAL_MS=0 " + mrctl + " job wait " + ids + " >" + Quote(wait_out) + " 2>" +
        Quote(wait_err) + "; echo $? >" + Quote(work_ + "/wait.rc") + ") </dev/null >/dev/null 2>&1 &");
  auto contents = [](const std::string& f) {
    std::ifstream in(f);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  ASSERT_TRUE(WaitFor([&] { return contents(wait_err).find("running, maps 0/2") != std::string::npos; }, 20s))
      << contents(wait_err);
  for (const char* w : {"w1", "w2"}) ASSERT_EQ(c.Mrctl(std::string("cluster recommission ") + w).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return !contents(work_ + "/wait.rc").empty(); }, 60s)) << contents(wait_err);
  EXPECT_EQ(contents(work_ + "/wait.rc"), "0\n") << contents(wait_err);
  EXPECT_NE(contents(wait_out).find("succeeded"), std::string::npos) << contents(wait_out);
  EXPECT_NE(contents(wait_err).find("mrctl: job " + ids + ": 100% succeeded"), std::string::npos) << contents(wait_err);
  // The output, against mr-local's (the oracle).
  EXPECT_EQ(Cat(c, "/out"), Oracle("wordcount", text, 1, "", 1 << 20));

  // A finished job: at once, its record, exit 0.
  r = c.Mrctl("job wait " + ids);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("JTT "), std::string::npos) << r.out;
  // A killed one: exit 1 and one line saying so.
  for (const char* w : {"w1", "w2"}) ASSERT_EQ(c.Mrctl(std::string("cluster decommission ") + w).exit_code, 0);
  r = c.Mrctl("job run wordcount -i /in.txt -o /out2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id2 = std::to_string(json::parse(r.out)["id"].get<int64_t>());
  ASSERT_EQ(c.Mrctl("job kill " + id2).exit_code, 0);
  r = c.Mrctl("--quiet job wait " + id2);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("mrctl: job " + id2 + " killed", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = c.Mrctl("job wait 999");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("mrctl: ", 0), 0u) << r.err;
}

}  // namespace
}  // namespace mr::testing
