// Replica integrity end to end (docs/dfs.md, "A replica is corrupt"): bad
// chunks in several replicas, the only replica corrupt, the scrubber, and
// block files lost while a worker was down. Real processes and files; every
// check compares with sha256sum of the source; every wait is bounded.
#include <fstream>

#include "tests/integration/cluster_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr int64_t kChunk = 64 * 1024;

class DfsReplicaTest : public ScratchTest {
 protected:
  // Flips one byte in chunk `chunk` of a block file.
  static void FlipByte(const std::string& path, int64_t chunk) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.is_open()) << path;
    const int64_t at = chunk * kChunk + 1234;
    f.seekg(at);
    const char ch = static_cast<char>(f.get());
    f.seekp(at);
    f.put(static_cast<char>(ch ^ 0x20));
  }

  // Good and corrupt replicas of block `index` of `path` as dfs stat shows them.
  static std::pair<std::vector<std::string>, std::vector<std::string>> Replicas(
      const LocalCluster& c, const std::string& path, int index = 0) {
    json s = c.MrctlJson("dfs stat --json " + path);
    if (!s.is_object()) return {};
    const json& b = s["blocks"][index];
    std::vector<std::string> good = b["replicas"].get<std::vector<std::string>>();
    std::vector<std::string> bad;
    if (b.contains("corrupt_replicas")) bad = b["corrupt_replicas"].get<std::vector<std::string>>();
    return {good, bad};
  }
};

// Issue 10, item 1, exactly: two replicas, each with a different bad chunk.
// Every byte exists in a good copy, so cat succeeds byte-exact; no replica
// file is ever deleted; both replicas end up good again (repaired in place:
// with two workers there is nowhere else to put them).
TEST_F(DfsReplicaTest, TwoReplicasCorruptInDifferentChunksReadExactlyAndBothRepaired) {
  LocalCluster c(2, 2, "--block-size 1048576 --replication 2 --heartbeat-ms 200");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("text", "1M", 21);  // one block of 16 chunks
  const std::string sha = Sha256OfFile(file);
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(file) + " /t.txt").exit_code, 0);
  auto [replicas, corrupt] = Replicas(c, "/t.txt");
  ASSERT_EQ(replicas.size(), 2u);
  const uint64_t block = c.MrctlJson("dfs stat --json /t.txt")["blocks"][0]["id"];
  // A is the replica cat reads first: its chunk 2 is bad; B's chunk 10 is.
  const std::string a = c.BlockFile(replicas[0], block), b = c.BlockFile(replicas[1], block);
  FlipByte(a, 2);
  FlipByte(b, 10);

  EXPECT_EQ(CatSha(c, "/t.txt"), sha);
  EXPECT_TRUE(std::filesystem::exists(a));
  EXPECT_TRUE(std::filesystem::exists(b));

  // Both replicas are repaired; neither file disappears meanwhile.
  bool files_kept = true;
  const bool repaired = WaitFor(
      [&] {
        files_kept = files_kept && std::filesystem::exists(a) && std::filesystem::exists(b);
        auto [good, bad] = Replicas(c, "/t.txt");
        return good.size() == 2 && bad.empty() && Sha256OfFile(a) == sha && Sha256OfFile(b) == sha;
      },
      40s);
  EXPECT_TRUE(repaired) << "A " << Sha256OfFile(a) << " B " << Sha256OfFile(b) << " want " << sha;
  EXPECT_TRUE(files_kept);
  EXPECT_EQ(CatSha(c, "/t.txt"), sha);
  // Each worker quarantined its replica (its own line; "0 quarantined" at
  // registration does not count).
  EXPECT_EQ(Shell("grep -l 'block " + std::to_string(block) + ": .*replica quarantined' " +
                  Quote(c.dir()) + "/logs/w*.log | wc -l")
                .out,
            "2\n");
}

// The only replica is corrupt: the read fails with a clear Corruption error,
// and the replica is kept (its other chunks are the only copy there is).
TEST_F(DfsReplicaTest, OnlyReplicaCorruptFailsWithCorruptionAndIsKept) {
  LocalCluster c(2, 1, "--block-size 1048576 --replication 1 --heartbeat-ms 200");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("text", "1M", 22);
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(file) + " /one.txt").exit_code, 0);
  auto [replicas, corrupt] = Replicas(c, "/one.txt");
  ASSERT_EQ(replicas.size(), 1u);
  const uint64_t block = c.MrctlJson("dfs stat --json /one.txt")["blocks"][0]["id"];
  const std::string path = c.BlockFile(replicas[0], block);
  FlipByte(path, 5);

  CommandResult r = c.Mrctl("dfs cat /one.txt");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("Corruption"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(path));
  // The master keeps it as a corrupt replica (a source of last resort)...
  EXPECT_TRUE(WaitFor(
      [&] {
        auto [good, bad] = Replicas(c, "/one.txt");
        return good.empty() && bad == replicas;
      },
      20s));
  // ...and the worker keeps the file; a second read fails the same way.
  EXPECT_TRUE(std::filesystem::exists(path));
  r = c.Mrctl("dfs cat /one.txt");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("Corruption"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(path));
}

// A replica nobody reads is found by the scrubber and repaired.
TEST_F(DfsReplicaTest, ScrubberFindsAnUnreadCorruptReplicaAndItIsRepaired) {
  LocalCluster c(3, 2,
                 "--block-size 1048576 --replication 2 --heartbeat-ms 200"
                 " --dfs-option 'scrub_interval_s = 2'"
                 " --dfs-option 'scrub_bytes_per_second = 16777216'");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("web", "1M", 23);
  const std::string sha = Sha256OfFile(file);
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(file) + " /w.xml").exit_code, 0);
  auto [replicas, corrupt] = Replicas(c, "/w.xml");
  ASSERT_EQ(replicas.size(), 2u);
  const uint64_t block = c.MrctlJson("dfs stat --json /w.xml")["blocks"][0]["id"];
  const std::string victim = replicas[1];
  FlipByte(c.BlockFile(victim, block), 7);

  const bool repaired = WaitFor(
      [&] {
        auto [good, bad] = Replicas(c, "/w.xml");
        if (good.size() != 2 || !bad.empty()) return false;
        for (const auto& n : good) {
          if (Sha256OfFile(c.BlockFile(n, block)) != sha) return false;
        }
        return true;
      },
      40s);
  EXPECT_TRUE(repaired);
  const std::string log = c.dir() + "/logs/" + victim + ".log";
  EXPECT_NE(Shell("grep 'scrub' " + Quote(log) + " | grep -i 'corrupt'").out, "")
      << Shell("cat " + Quote(log)).out;
  EXPECT_EQ(CatSha(c, "/w.xml"), sha);
}

// Issue 10, item 3: a block file truncated while its worker was down is
// dropped at start with one log line naming it and why, and the block is
// copied again from the other replica.
TEST_F(DfsReplicaTest, TruncatedBlockFileIsNamedAtStartAndReReplicated) {
  LocalCluster c(2, 2, "--block-size 1048576 --replication 2 --heartbeat-ms 200");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("dna", "1M", 24);
  const std::string sha = Sha256OfFile(file);
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(file) + " /g.fa").exit_code, 0);
  const uint64_t block = c.MrctlJson("dfs stat --json /g.fa")["blocks"][0]["id"];
  ASSERT_EQ(c.Script("stop w2").exit_code, 0);
  std::filesystem::resize_file(c.BlockFile("w2", block), 1000);
  ASSERT_EQ(c.Script("start w2").exit_code, 0);

  const std::string log = c.dir() + "/logs/w2.log";
  char id_hex[17];
  std::snprintf(id_hex, sizeof id_hex, "%016llx", static_cast<unsigned long long>(block));
  EXPECT_TRUE(WaitFor(
      [&] {
        return Shell("grep " + Quote(id_hex) + " " + Quote(log) + " | grep 'length 1000 expected 1048576'")
                   .out != "";
      },
      20s))
      << Shell("cat " + Quote(log)).out;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto [good, bad] = Replicas(c, "/g.fa");
        return good.size() == 2 && Sha256OfFile(c.BlockFile("w2", block)) == sha;
      },
      40s));
  EXPECT_EQ(CatSha(c, "/g.fa"), sha);
}

}  // namespace
}  // namespace mr::testing
