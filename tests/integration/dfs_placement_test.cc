// Where blocks go and where they are read from, end to end (issue 12, points
// 3 and 6): `dfs put --datacenter`, reads from the replicas nearest a client
// that names (or is inferred to be in) a datacenter, maps that read nothing
// of the previous block, and the job sample counted in the job's record.
// Real processes on 127.0.0.k per datacenter (local-cluster.sh
// --dc-addresses); every wait is bounded; outputs compared with sha256sum.
#include <fstream>
#include <map>
#include <set>

#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;

constexpr int64_t kChunk = 64 * 1024;

class DfsPlacementTest : public JobTest {
 protected:
  // Flips one byte in chunk `chunk` of a block file.
  static void FlipByte(const std::string& path, int64_t chunk) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.is_open()) << path;
    const int64_t at = chunk * kChunk + 777;
    f.seekg(at);
    const char ch = static_cast<char>(f.get());
    f.seekp(at);
    f.put(static_cast<char>(ch ^ 0x20));
  }

  static std::string Log(const LocalCluster& c, const std::string& name) {
    std::ifstream f(c.dir() + "/logs/" + name + ".log");
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
};

// `dfs put --datacenter DC` puts replica 1 of every block in DC: with one
// replica every block is there, with two every block has one there; stat
// records the pin and counts blocks by datacenter. An unknown datacenter
// is refused before anything is sent.
TEST_F(DfsPlacementTest, PutWithADatacenterPutsReplicaOneOfEveryBlockThere) {
  LocalCluster c(6, 3, "--block-size 1048576 --dc-addresses");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("text", "6M", 31);
  for (const auto& [dc, r] : std::vector<std::pair<std::string, int>>{{"dc2", 1}, {"dc3", 2}}) {
    const std::string path = "/pinned-" + dc;
    CommandResult put = c.Mrctl("dfs put --datacenter " + dc + " -r " + std::to_string(r) + " " +
                                Quote(file) + " " + path);
    ASSERT_EQ(put.exit_code, 0) << put.err;
    json s = c.MrctlJson("dfs stat --json " + path);
    ASSERT_EQ(s["blocks"].size(), 6u);
    EXPECT_EQ(s["datacenter"], dc);
    EXPECT_EQ(s["blocks_by_datacenter"][dc], 6) << s.dump(2);
    for (const json& b : s["blocks"]) {
      const auto dcs = b["datacenters"].get<std::vector<std::string>>();
      ASSERT_EQ(dcs.size(), static_cast<size_t>(r)) << b.dump();
      EXPECT_TRUE(std::count(dcs.begin(), dcs.end(), dc) == 1) << b.dump();
      if (r == 2) EXPECT_NE(dcs[0], dcs[1]) << "hdfs: replica 2 in another datacenter";
    }
    EXPECT_EQ(Shell(Mrctl() + " --config " + Quote(c.config()) + " dfs cat " + path +
                    " | sha256sum | cut -d' ' -f1")
                  .out,
              Sha256OfFile(file));
  }
  CommandResult bad = c.Mrctl("dfs put --datacenter dc9 " + Quote(file) + " /nowhere");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("no worker of the cluster is in datacenter 'dc9'"), std::string::npos)
      << bad.err;
  EXPECT_NE(c.Mrctl("dfs stat /nowhere").exit_code, 0);
}

// A client in dc1 reads every block from its dc1 replica. The instrument:
// every dc2 replica has a bad chunk, which a worker finds (and logs as
// quarantined) only when that replica is read. mrctl on 127.0.0.1, dc1's
// address, is inferred to be in dc1; then --datacenter dc2 reads the dc2
// replicas, which shows the instrument sees reads (and the bytes still
// arrive exact, from the failover).
TEST_F(DfsPlacementTest, ACatFromDc1ReadsTheDc1Replicas) {
  LocalCluster c(4, 2, "--block-size 1048576 --replication 2 --dc-addresses");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("text", "8M", 32);
  const std::string sha = Sha256OfFile(file);
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(file) + " /t.txt").exit_code, 0);
  json s = c.MrctlJson("dfs stat --json /t.txt");
  ASSERT_EQ(s["blocks"].size(), 8u);
  std::set<std::string> dc2_workers;
  for (const json& b : s["blocks"]) {
    ASSERT_EQ(b["replicas"].size(), 2u) << b.dump();
    for (size_t i = 0; i < 2; ++i) {
      if (b["datacenters"][i] != "dc2") continue;
      const std::string w = b["replicas"][i];
      dc2_workers.insert(w);
      FlipByte(c.BlockFile(w, b["id"].get<uint64_t>()), 3);
    }
  }
  ASSERT_FALSE(dc2_workers.empty());
  const std::string cat = Mrctl() + " --config " + Quote(c.config());
  auto quarantined = [&] {
    int n = 0;
    for (const auto& w : dc2_workers)
      n += Log(c, w).find("replica quarantined") != std::string::npos;
    return n;
  };

  EXPECT_EQ(Shell(cat + " dfs cat /t.txt | sha256sum | cut -d' ' -f1").out, sha);
  EXPECT_EQ(Shell(cat + " --datacenter dc1 dfs cat /t.txt | sha256sum | cut -d' ' -f1").out, sha);
  const std::string got = work_ + "/got.txt";
  ASSERT_EQ(c.Mrctl("--datacenter dc1 dfs get /t.txt " + Quote(got)).exit_code, 0);
  EXPECT_EQ(Sha256OfFile(got), sha);
  EXPECT_EQ(quarantined(), 0) << "a client in dc1 read a dc2 replica";

  EXPECT_EQ(Shell(cat + " --datacenter dc2 dfs cat /t.txt | sha256sum | cut -d' ' -f1").out, sha);
  EXPECT_GT(quarantined(), 0) << "the instrument did not see the dc2 reads";
}

// A map whose split starts after the file's start reads nothing of the
// previous block (the put recorded its byte before); what it reads past
// its end (the rest of its last line) is at most one 64 KiB chunk. Before,
// each such map also read the previous block's byte, which from another
// worker costs its whole last 64 KiB checksum chunk. `spread` placement over
// 2 workers in 2 datacenters with one replica alternates the blocks between
// them, so a map that runs beside its block has the previous one remote.
// The reads are counted in raw bytes: compression between datacenters
// (cluster.inter_dc_zstd_level) is off here, or the wire would carry less.
TEST_F(DfsPlacementTest, AMapReadsNothingOfThePreviousBlock) {
  LocalCluster c(2, 2, "--block-size 1048576 --replication 1 --placement spread "
                       "--cluster-option 'inter_dc_zstd_level = 0'");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("text", "8M", 33);
  Put(c, file, "/in/t.txt");
  json s = c.MrctlJson("dfs stat --json /in/t.txt");
  for (size_t i = 1; i < s["blocks"].size(); ++i) {
    ASSERT_NE(s["blocks"][i]["replicas"][0], s["blocks"][i - 1]["replicas"][0]) << s.dump(2);
  }
  json r = RunJob(c, "grep", "/in/t.txt", "/out/g", 0, "pattern=the");
  ASSERT_EQ(r["state"], "succeeded") << r.dump(2);
  const int64_t size = std::filesystem::file_size(file);
  int64_t read = 0;
  for (const json& m : r["map_tasks"]) {
    const json& b = m["read_bytes"];
    read += b["local"].get<int64_t>() + b["same_dc"].get<int64_t>() + b["other_dc"].get<int64_t>();
  }
  const int64_t maps = r["map_tasks"].size();
  ASSERT_EQ(maps, 8);
  // Past the end: at most one chunk for each of the first maps-1 maps; and
  // for remote reads the frames' headers (a few dozen bytes a frame).
  EXPECT_LE(read - size, (maps - 1) * kChunk + maps * 4096)
      << "read " << read << " of a " << size << "-byte file";
  EXPECT_GE(read, size);
}

// `job run -r 2` samples the input for the partitioner: the sample is read
// from the client's datacenter when a replica is there, and what it read
// from elsewhere is recorded in the job (client_inter_dc_bytes, part of
// INT). A client in dc1 with a replica of every block in dc1 reads none
// across; a client that names dc2 with every replica in dc1 reads all of
// it across.
TEST_F(DfsPlacementTest, TheJobSampleIsReadNearAndCounted) {
  LocalCluster c(4, 2, "--block-size 1048576 --dc-addresses");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = Generate("text", "4M", 34);
  ASSERT_EQ(c.Mrctl("dfs put -r 1 --datacenter dc1 " + Quote(file) + " /in/t.txt").exit_code, 0);
  CommandResult near =
      c.Mrctl("--datacenter dc1 job run sort -i /in/t.txt -o /out/a -r 2 --wait --json");
  ASSERT_EQ(near.exit_code, 0) << near.err;
  json a = json::parse(near.out, nullptr, false);
  ASSERT_EQ(a["state"], "succeeded") << near.out;
  EXPECT_GT(a["client_read_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(a["client_inter_dc_bytes"], 0);

  CommandResult far =
      c.Mrctl("--datacenter dc2 job run sort -i /in/t.txt -o /out/b -r 2 --wait --json");
  ASSERT_EQ(far.exit_code, 0) << far.err;
  json b = json::parse(far.out, nullptr, false);
  ASSERT_EQ(b["state"], "succeeded") << far.out;
  EXPECT_GT(b["client_inter_dc_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(b["client_inter_dc_bytes"], b["client_read_bytes"]);
  EXPECT_GE(b["inter_dc_bytes"].get<int64_t>(), b["client_inter_dc_bytes"].get<int64_t>());
}

}  // namespace
}  // namespace mr::testing
