// DFS end to end on a local cluster of 4 workers in 2 datacenters: real
// processes, real sockets, real files. Every check compares with an
// independent computation (sha256sum of the local file).
#include <csignal>
#include <fstream>

#include "tests/integration/cluster_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kFourWorkers = "--block-size 1048576 --replication 2 --heartbeat-ms 200";

class DfsIntegrationTest : public ScratchTest {};

// The basic promise: bytes in equal bytes out, across blocks and replicas.
TEST_F(DfsIntegrationTest, PutThenCatReturnsTheSameBytes) {
  LocalCluster c(4, 2, kFourWorkers);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("text", "5M");
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(file) + " /in/text.txt").exit_code, 0);
  EXPECT_EQ(CatSha(c, "/in/text.txt"), Sha256OfFile(file));

  json stat = c.MrctlJson("dfs stat --json /in/text.txt");
  ASSERT_TRUE(stat.is_object());
  EXPECT_EQ(stat["input_type"], "text");
  EXPECT_EQ(stat["length"], 5 << 20);
  ASSERT_EQ(stat["blocks"].size(), 5u);
  for (const auto& b : stat["blocks"]) {
    ASSERT_EQ(b["replicas"].size(), 2u);
    EXPECT_NE(b["replicas"][0], b["replicas"][1]);
    // hdfs placement: the second replica goes to the other datacenter.
    EXPECT_NE(b["datacenters"][0], b["datacenters"][1]);
  }
  // get writes the same bytes to a local file.
  ASSERT_EQ(c.Mrctl("dfs get /in/text.txt " + Quote(work_ + "/copy")).exit_code, 0);
  EXPECT_EQ(Sha256OfFile(work_ + "/copy"), Sha256OfFile(file));
}

// Replication exists to survive a lost node.
TEST_F(DfsIntegrationTest, CatSurvivesSigkillOfAWorker) {
  LocalCluster c(4, 2, kFourWorkers);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("web", "4M");
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(file) + " /web.xml").exit_code, 0);
  json stat = c.MrctlJson("dfs stat --json /web.xml");
  const std::string victim = stat["blocks"][0]["replicas"][0];
  ASSERT_EQ(c.Script("kill " + victim).exit_code, 0);
  EXPECT_EQ(CatSha(c, "/web.xml"), Sha256OfFile(file));
  // Once the master notices, it copies the lost replicas elsewhere.
  EXPECT_TRUE(WaitFor(
      [&] {
        json st = c.MrctlJson("cluster status --json");
        return st.is_object() && st["under_replicated_blocks"] == 0 &&
               c.LiveWorkers() == 3;
      },
      20s));
  EXPECT_EQ(CatSha(c, "/web.xml"), Sha256OfFile(file));
}

// The namespace is durable and replica locations come back from block reports.
TEST_F(DfsIntegrationTest, MasterRestartKeepsNamespaceAndData) {
  LocalCluster c(4, 2, kFourWorkers);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("dna", "3M");
  ASSERT_EQ(c.Mrctl("dfs mkdir -p /a/b").exit_code, 0);
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(file) + " /a/b/genome.fa").exit_code, 0);
  const std::string ls_before = c.Mrctl("dfs ls --json /a/b").out;
  json stat_before = c.MrctlJson("dfs stat --json /a/b/genome.fa");

  ASSERT_EQ(c.Script("stop master").exit_code, 0);
  ASSERT_EQ(c.Script("start master").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return c.LiveWorkers() == 4; }, 20s));

  EXPECT_EQ(c.Mrctl("dfs ls --json /a/b").out, ls_before);
  json stat_after = c.MrctlJson("dfs stat --json /a/b/genome.fa");
  EXPECT_EQ(stat_after["input_type"], "dna");
  ASSERT_EQ(stat_after["blocks"].size(), stat_before["blocks"].size());
  for (size_t i = 0; i < stat_before["blocks"].size(); ++i) {
    EXPECT_EQ(stat_after["blocks"][i]["id"], stat_before["blocks"][i]["id"]);
    EXPECT_EQ(stat_after["blocks"][i]["bytes"], stat_before["blocks"][i]["bytes"]);
    auto before = stat_before["blocks"][i]["replicas"].get<std::vector<std::string>>();
    auto after = stat_after["blocks"][i]["replicas"].get<std::vector<std::string>>();
    std::sort(before.begin(), before.end());
    std::sort(after.begin(), after.end());
    EXPECT_EQ(after, before) << "block " << i;
  }
  EXPECT_EQ(CatSha(c, "/a/b/genome.fa"), Sha256OfFile(file));
}

// A flipped byte on disk is caught by the checksum, never returned.
TEST_F(DfsIntegrationTest, CorruptReplicaIsDetectedReportedAndReplaced) {
  LocalCluster c(4, 2, kFourWorkers);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("text", "2M", 11);
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(file) + " /t.txt").exit_code, 0);
  json stat = c.MrctlJson("dfs stat --json /t.txt");
  const std::string bad_node = stat["blocks"][0]["replicas"][0];  // the one cat reads first
  const uint64_t block = stat["blocks"][0]["id"];
  {
    std::fstream f(c.BlockFile(bad_node, block), std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.is_open()) << c.BlockFile(bad_node, block);
    f.seekg(1000);
    char ch = static_cast<char>(f.get());
    f.seekp(1000);
    f.put(static_cast<char>(ch ^ 0x20));
  }
  EXPECT_EQ(CatSha(c, "/t.txt"), Sha256OfFile(file));
  // The bad replica is quarantined, not deleted, and repaired in place from
  // the good one: two good replicas again, the bad node's file good again.
  const std::string block0_sha =
      Shell("head -c 1048576 " + Quote(file) + " | sha256sum | cut -d' ' -f1").out;
  EXPECT_TRUE(WaitFor(
      [&] {
        json s = c.MrctlJson("dfs stat --json /t.txt");
        auto r = s["blocks"][0]["replicas"].get<std::vector<std::string>>();
        return r.size() == 2 && s["blocks"][0]["corrupt_replicas"].empty() &&
               Sha256OfFile(c.BlockFile(bad_node, block)) == block0_sha;
      },
      20s));
  EXPECT_EQ(CatSha(c, "/t.txt"), Sha256OfFile(file));
  EXPECT_NE(Shell("grep -l 'checksum mismatch' " + Quote(c.dir()) + "/logs/*.log").out, "");
}

// Only holders of the cluster secret get in; others are refused and logged.
TEST_F(DfsIntegrationTest, WrongSecretIsRefused) {
  LocalCluster c(2, 2, kFourWorkers);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string bad = work_ + "/bad.toml";
  Shell("sed 's/^secret = .*/secret = \"not-the-secret\"/' " + Quote(c.config()) + " > " + Quote(bad));
  CommandResult r = Shell(Quote(BuildDir() + "/tools/mrctl") + " --config " + Quote(bad) + " dfs ls /");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("secret"), std::string::npos) << r.err;
  EXPECT_NE(Shell("grep -c 'rejected connection' " + Quote(c.dir()) + "/logs/master.log").out, "0\n");
  EXPECT_EQ(c.Mrctl("dfs ls /").exit_code, 0);  // the master still serves others
}

// Bad input: one clear line, non-zero exit, nothing lost.
TEST_F(DfsIntegrationTest, BadInputGetsAClearErrorAndLosesNothing) {
  LocalCluster c(2, 1, kFourWorkers);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  CommandResult r = c.Mrctl("dfs put /no/such/file /x");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  r = c.Mrctl("dfs cat /missing");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  r = c.Mrctl("dfs get /missing " + Quote(work_ + "/out"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(work_ + "/out"));
  EXPECT_FALSE(std::filesystem::exists(work_ + "/out.mrctl-partial"));

  const std::string file = Generate("text", "100K");
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(file) + " /d/f.txt").exit_code, 0);
  r = c.Mrctl("dfs put " + Quote(file) + " /d/f.txt");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("already exists"), std::string::npos) << r.err;
  r = c.Mrctl("dfs rm /d");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not empty"), std::string::npos) << r.err;
  EXPECT_EQ(CatSha(c, "/d/f.txt"), Sha256OfFile(file));
  EXPECT_EQ(c.Mrctl("dfs rm -r /d").exit_code, 0);
  EXPECT_EQ(c.Mrctl("dfs stat /d").exit_code, 1);

  // A bad cluster file: exit 2 and one line naming the key.
  const std::string bad = work_ + "/bad.toml";
  Shell("cp " + Quote(c.config()) + " " + Quote(bad) + " && echo 'blocksize = 3' >> " + Quote(bad));
  r = Shell(Quote(BuildDir() + "/master/mr-master") + " --config " + Quote(bad));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("blocksize"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  // An unknown scheduler stops the master at start-up, listing the valid ones.
  const std::string bad_sched = work_ + "/bad-sched.toml";
  Shell("sed 's/^name = \"fifo\"/name = \"no-such-policy\"/' " + Quote(c.config()) + " > " +
        Quote(bad_sched));
  r = Shell(Quote(BuildDir() + "/master/mr-master") + " --config " + Quote(bad_sched) +
            " --log-file " + Quote(work_ + "/m.log"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown scheduler 'no-such-policy' (valid: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fifo"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// A worker dying mid-put: the put completes without it or fails cleanly;
// a half-written file is never visible.
TEST_F(DfsIntegrationTest, WorkerDeathDuringPutNeverExposesAPartialFile) {
  LocalCluster c(4, 2, kFourWorkers);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("text", "48M", 3);
  const std::string put = Quote(BuildDir() + "/tools/mrctl") + " --config " + Quote(c.config()) +
                          " dfs put " + Quote(file) + " /big.txt";
  // Start the put, kill a worker while it streams, then wait for the put.
  CommandResult r = Shell("( " + put + " ) & P=$!; sleep 0.3; " +
                        "MR_BUILD_DIR=" + Quote(BuildDir()) + " " + Quote(SourceDir()) +
                        "/deploy/local-cluster.sh kill w2 --dir " + Quote(c.dir()) +
                        "; wait $P; echo put-exit=$?");
  const bool put_ok = r.out.find("put-exit=0") != std::string::npos;
  CommandResult ls = c.Mrctl("dfs ls /");
  if (put_ok) {
    EXPECT_EQ(CatSha(c, "/big.txt"), Sha256OfFile(file));
  } else {
    EXPECT_EQ(ls.out.find("big.txt"), std::string::npos) << "a failed put left a visible file";
  }
}

// The real data beside the checkout (Wikipedia XML, Gutenberg books, E. coli).
TEST_F(DfsIntegrationTest, RealDataRoundTripsWithTypeTags) {
  const std::string data = SharedDataDir();
  if (data.empty()) GTEST_SKIP() << "../shared/data not present";
  LocalCluster c(4, 2, kFourWorkers);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  struct Case {
    std::string local, dfs, type;
  };
  std::vector<Case> cases;
  for (const auto& e : std::filesystem::directory_iterator(data + "/wikipedia"))
    cases.push_back({e.path(), "/real/wiki/" + e.path().filename().string(), "web"});
  for (const auto& e : std::filesystem::directory_iterator(data + "/dna"))
    cases.push_back({e.path(), "/real/dna/" + e.path().filename().string(), "dna"});
  int books = 0;
  for (const auto& e : std::filesystem::directory_iterator(data + "/books")) {
    if (books++ < 6) cases.push_back({e.path(), "/real/books/" + e.path().filename().string(), "text"});
  }
  for (const auto& k : cases) {
    ASSERT_EQ(c.Mrctl("dfs put " + Quote(k.local) + " " + Quote(k.dfs)).exit_code, 0) << k.local;
    EXPECT_EQ(CatSha(c, k.dfs), Sha256OfFile(k.local)) << k.local;
    EXPECT_EQ(c.MrctlJson("dfs stat --json " + Quote(k.dfs))["input_type"], k.type) << k.local;
  }
}

}  // namespace
}  // namespace mr::testing
