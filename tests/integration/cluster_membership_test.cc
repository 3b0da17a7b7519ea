// Workers join and leave a running cluster (docs/config.md "Workers
// joining", docs/dfs.md "Adding and retiring workers"): a worker with no
// [[worker]] entry joins, stores blocks and runs tasks; decommissioning
// drains a worker so that stopping it loses nothing; a master restart keeps
// what it learned; and every bad registration is refused with one line and
// a non-zero exit while the cluster keeps serving.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using std::chrono::seconds;

class ClusterMembershipTest : public JobTest {
 protected:
  // The worker's row of `cluster status`; null while the master is
  // unreachable (restarting) or does not know it.
  static nlohmann::json Worker(const LocalCluster& c, const std::string& id) {
    auto st = nlohmann::json::parse(c.Mrctl("cluster status --json").out, nullptr, false);
    if (st.is_object()) {
      for (const auto& w : st["workers"]) {
        if (w["id"] == id) return w;
      }
    }
    return nullptr;
  }
  static std::string AdminState(const LocalCluster& c, const std::string& id) {
    nlohmann::json w = Worker(c, id);
    return w.is_object() && w.contains("admin_state") ? w["admin_state"].get<std::string>() : "?";
  }
  static int64_t UnderReplicated(const LocalCluster& c) {
    nlohmann::json st = c.MrctlJson("cluster status --json");
    return st.is_object() ? st["under_replicated_blocks"].get<int64_t>() : -1;
  }
  // Worker ids holding a replica of any block of `path`.
  static std::set<std::string> Holders(const LocalCluster& c, const std::string& path) {
    std::set<std::string> nodes;
    nlohmann::json st = c.MrctlJson("dfs stat --json " + Quote(path));
    if (!st.is_object()) return nodes;
    for (const auto& b : st["blocks"]) {
      for (const auto& r : b["replicas"]) nodes.insert(r.get<std::string>());
    }
    return nodes;
  }
  // Runs mr-worker in the foreground with `args` and the cluster's file; a
  // refused worker must exit by itself (timeout's 124 otherwise).
  static CommandResult RunWorker(const LocalCluster& c, const std::string& args) {
    return Shell("timeout 30 " + Quote(BuildDir() + "/worker/mr-worker") + " --config " +
                 Quote(c.config()) + " " + args);
  }
  // A loopback port nobody listens on now (the kernel's choice).
  static std::string Port(const LocalCluster&) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return std::to_string(ntohs(a.sin_port));
  }
  // The workers every task of a job ran on, one entry per task.
  static std::vector<std::string> TaskNodes(const LocalCluster& c, const nlohmann::json& job) {
    std::vector<std::string> nodes;
    nlohmann::json j = c.MrctlJson("job show " + std::to_string(job["id"].get<int64_t>()) + " --json");
    if (!j.is_object()) return nodes;
    for (const auto& m : j["map_tasks"]) nodes.push_back(m["node"]);
    for (const auto& r : j["reduce_tasks"]) nodes.push_back(r["node"]);
    return nodes;
  }
};

// A worker that is in no [[worker]] entry joins a running cluster (in a
// datacenter the cluster did not have), receives blocks, and runs every
// task of a job once the other workers are stopped; the output equals
// mr-local's. On main mr-worker refused --datacenter (no such flag) and a
// worker without an entry could not start.
TEST_F(ClusterMembershipTest, AJoinedWorkerStoresBlocksAndRunsTasks) {
  LocalCluster c(2, 2, "--join --block-size 1048576");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  CommandResult add = c.Script("add-worker w3 --datacenter dc3 --rack r1");
  ASSERT_EQ(add.exit_code, 0) << add.err;
  nlohmann::json w3 = Worker(c, "w3");
  ASSERT_TRUE(w3.is_object());
  EXPECT_EQ(w3["datacenter"], "dc3");
  EXPECT_EQ(w3["rack"], "r1");
  EXPECT_TRUE(w3["live"].get<bool>());

  // Replication 3 is accepted: the master counts the workers it knows.
  const std::string text = Generate("text", "5M", 11);
  CommandResult put = c.Mrctl("dfs put -r 3 " + Quote(text) + " /in/text.txt");
  ASSERT_EQ(put.exit_code, 0) << put.err;
  EXPECT_TRUE(Holders(c, "/in/text.txt").count("w3"));

  // Only w3 is left to run tasks.
  ASSERT_EQ(c.Script("stop w1").exit_code, 0);
  ASSERT_EQ(c.Script("stop w2").exit_code, 0);
  nlohmann::json job = RunJob(c, "wordcount", "/in/text.txt", "/out/wc", 2, "");
  ASSERT_EQ(job["state"], "succeeded") << job.dump();
  const std::vector<std::string> nodes = TaskNodes(c, job);
  EXPECT_EQ(nodes.size(), 5u + 2u);  // 5 blocks, 2 reduces
  for (const auto& n : nodes) EXPECT_EQ(n, "w3");
  EXPECT_EQ(Cat(c, "/out/wc"), Oracle("wordcount", text, 2, "", 1 << 20));
}

// Decommissioning w1 in a two-worker cluster with replication 2 cannot end:
// no other in-service worker can take the copies. Meanwhile w1 gets no new
// block and no task. A joining w3 takes the copies, w1 becomes
// decommissioned, and killing it loses nothing: every file reads back
// exact and no block is under-replicated. A master restart keeps w3's
// labels (known before it registers again) and w1's state. On main there
// was no `cluster decommission` (mrctl exited 2 on the unknown command).
TEST_F(ClusterMembershipTest, DecommissionDrainsAWorkerSoStoppingItLosesNothing) {
  LocalCluster c(2, 2, "--join --block-size 1048576");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string a = Generate("text", "6M", 21);
  ASSERT_EQ(c.Mrctl("dfs put -r 2 " + Quote(a) + " /a.txt").exit_code, 0);
  ASSERT_TRUE(Holders(c, "/a.txt").count("w1"));

  CommandResult d = c.Mrctl("cluster decommission w1");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(AdminState(c, "w1"), "decommissioning");
  EXPECT_GT(UnderReplicated(c), 0);  // w1's copies no longer count

  // No new block goes to w1, and no task runs there.
  const std::string b = Generate("text", "3M", 22);
  ASSERT_EQ(c.Mrctl("dfs put -r 1 " + Quote(b) + " /b.txt").exit_code, 0);
  EXPECT_FALSE(Holders(c, "/b.txt").count("w1"));
  nlohmann::json job = RunJob(c, "wordcount", "/a.txt", "/out/wc", 1, "");
  ASSERT_EQ(job["state"], "succeeded") << job.dump();
  const std::vector<std::string> nodes = TaskNodes(c, job);
  EXPECT_EQ(nodes.size(), 6u + 1u);
  for (const auto& n : nodes) EXPECT_NE(n, "w1");
  EXPECT_EQ(AdminState(c, "w1"), "decommissioning");  // still: nowhere to copy to

  ASSERT_EQ(c.Script("add-worker w3 --datacenter dc1 --rack r7").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return AdminState(c, "w1") == "decommissioned"; }, seconds(60)))
      << AdminState(c, "w1");
  EXPECT_EQ(UnderReplicated(c), 0);

  // The master restarts while w3 is down: it still knows w3's labels, and
  // that w1 is decommissioned.
  ASSERT_EQ(c.Script("stop w3").exit_code, 0);
  ASSERT_EQ(c.Script("stop master").exit_code, 0);
  ASSERT_EQ(c.Script("start master").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return Worker(c, "w3").is_object(); }, seconds(30)));
  nlohmann::json w3 = Worker(c, "w3");
  EXPECT_EQ(w3["datacenter"], "dc1");
  EXPECT_EQ(w3["rack"], "r7");
  EXPECT_EQ(AdminState(c, "w1"), "decommissioned");
  ASSERT_EQ(c.Script("start w3").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return c.LiveWorkers() == 3; }, seconds(30)));

  // w1 goes away for good: nothing is lost or under-replicated.
  ASSERT_EQ(c.Script("kill w1").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return c.LiveWorkers() == 2; }, seconds(30)));
  EXPECT_EQ(UnderReplicated(c), 0);
  EXPECT_EQ(CatSha(c, "/a.txt"), Sha256OfFile(a));
  EXPECT_EQ(CatSha(c, "/b.txt"), Sha256OfFile(b));
  EXPECT_EQ(Cat(c, "/out/wc"), Oracle("wordcount", a, 1, "", 1 << 20));

  // Recommissioning puts a worker back in service.
  ASSERT_EQ(c.Mrctl("cluster recommission w1").exit_code, 0);
  EXPECT_EQ(AdminState(c, "w1"), "in-service");
  CommandResult unknown = c.Mrctl("cluster decommission w9");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no worker 'w9'"), std::string::npos) << unknown.err;
}

// A worker whose full block report takes more than one part
// (dfs/block_report.h): frames of 192 KiB, the least the cluster file
// allows, carry 3,072 block references a part, and w1 holds 4,000 blocks.
// Restarted, it registers with the first part, sends the second, and the
// master knows every block again. (The fleet of bench/master_scale does the
// same at 60,000 blocks a worker: tests/bench/master_scale_namespace_test.sh,
// which fails without the split.)
TEST_F(ClusterMembershipTest, AWorkerWhoseReportPassesAPartRegistersInParts) {
  LocalCluster c(1, 1, "--block-size 65536 --replication 1 --cluster-option 'max_frame_bytes = 196608' "
                       "--dfs-option 'transfer_chunk_bytes = 65536'");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string zeros = work_ + "/zeros";  // 4,000 blocks, stored compressed
  ASSERT_EQ(Shell("truncate -s " + std::to_string(4000 * 65536) + " " + Quote(zeros)).exit_code, 0);
  CommandResult put = c.Mrctl("dfs put " + Quote(zeros) + " /zeros");
  ASSERT_EQ(put.exit_code, 0) << put.err;
  ASSERT_EQ(Worker(c, "w1")["blocks"], 4000);

  ASSERT_EQ(c.Script("stop w1").exit_code, 0);
  ASSERT_EQ(c.Script("start w1").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] {
    const nlohmann::json w = Worker(c, "w1");
    return w.is_object() && w["live"].get<bool>() && w["blocks"] == 4000;
  }, seconds(60))) << Worker(c, "w1").dump();
  EXPECT_EQ(UnderReplicated(c), 0);
  // The log line, once the worker's log is flushed.
  auto in_two_parts = [&] {
    return Shell("grep -c 'registered with master .*(4000 blocks, 0 quarantined, in 2 parts' " +
                 Quote(c.dir() + "/logs/w1.log")).out;
  };
  EXPECT_TRUE(WaitFor([&] { return in_two_parts() != "0\n"; }, seconds(10)));
  EXPECT_EQ(in_two_parts(), "1\n") << "w1 registered once since its restart, in two parts";
  EXPECT_EQ(CatSha(c, "/zeros"), Sha256OfFile(zeros));
}

// Each bad registration: one line on stderr naming the problem, a non-zero
// exit, and the cluster still serves. On main: the second w1 was admitted
// and replaced the first; a worker with another block size was admitted;
// the flags were unknown (exit 109 from CLI11 for the others).
TEST_F(ClusterMembershipTest, BadRegistrationsAreRefusedAndTheClusterKeepsServing) {
  LocalCluster c(2, 2, "--join --block-size 1048576");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string data = Generate("text", "2M", 31);
  ASSERT_EQ(c.Mrctl("dfs put " + Quote(data) + " /d.txt").exit_code, 0);
  const std::string scratch = work_ + "/dup";

  // A second process claiming w1, live elsewhere.
  CommandResult dup = RunWorker(c, "--id w1 --datacenter dc1 --advertise 127.0.0.1:" + Port(c) +
                                       " --data-dir " + Quote(scratch));
  EXPECT_EQ(dup.exit_code, 3) << dup.err;  // 3: the master refused it (issue 28)
  EXPECT_NE(dup.err.find("worker id 'w1' is live at"), std::string::npos) << dup.err;
  EXPECT_EQ(std::count(dup.err.begin(), dup.err.end(), '\n'), 1) << dup.err;

  // The same worker restarting from its own address is fine.
  ASSERT_EQ(c.Script("kill w1").exit_code, 0);
  ASSERT_EQ(c.Script("start w1").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return c.LiveWorkers() == 2; }, seconds(30)));

  // A cluster file that disagrees with the master's on the block size.
  const std::string other = work_ + "/other.toml";
  Shell("sed 's/^block_size = .*/block_size = 2097152/' " + Quote(c.config()) + " > " + Quote(other));
  CommandResult size = Shell("timeout 30 " + Quote(BuildDir() + "/worker/mr-worker") + " --config " +
                             Quote(other) + " --id w5 --datacenter dc1 --advertise 127.0.0.1:" +
                             Port(c) + " --data-dir " + Quote(work_ + "/w5"));
  EXPECT_EQ(size.exit_code, 3) << size.err;  // 3: the master refused it (issue 28)
  EXPECT_NE(size.err.find("disagrees with the master on 'dfs.block_size': it has 2097152, the master 1048576"),
            std::string::npos)
      << size.err;

  // Advertised addresses that are not host:port, or do not resolve, or
  // are a wildcard.
  for (const std::string& bad : {"127.0.0.1", "nosuchhost.invalid:7100", "0.0.0.0:7100", "1.2.3.4:99999"}) {
    CommandResult r = RunWorker(c, "--id w6 --datacenter dc1 --advertise " + Quote(bad) +
                                       " --data-dir " + Quote(work_ + "/w6"));
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("mr-worker: --advertise"), std::string::npos) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // No entry and no datacenter.
  CommandResult nodc = RunWorker(c, "--id w7 --advertise 127.0.0.1:" + Port(c));
  EXPECT_EQ(nodc.exit_code, 2);
  EXPECT_NE(nodc.err.find("give its --datacenter"), std::string::npos) << nodc.err;

  // The cluster kept serving throughout.
  EXPECT_EQ(c.LiveWorkers(), 2);
  EXPECT_EQ(CatSha(c, "/d.txt"), Sha256OfFile(data));
  nlohmann::json st = c.MrctlJson("cluster status --json");
  EXPECT_EQ(st["workers"].size(), 2u);  // no refused worker is known
}

// With [[worker]] entries the file is an allow-list: an id not in it, and
// an id claiming other labels than its entry, are refused. On main the
// first was refused too ("not in the cluster file", but only after it had
// started retrying forever: it never exited) and the second could not be
// expressed.
TEST_F(ClusterMembershipTest, TheAllowListRefusesOtherIdsAndOtherLabels) {
  LocalCluster c(2, 2);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  CommandResult stranger = RunWorker(c, "--id w9 --datacenter dc1 --advertise 127.0.0.1:" + Port(c) +
                                            " --data-dir " + Quote(work_ + "/w9"));
  EXPECT_EQ(stranger.exit_code, 3) << stranger.err;  // 3: the master refused it (issue 28)
  EXPECT_NE(stranger.err.find("worker 'w9' is not in the allow-list"), std::string::npos)
      << stranger.err;

  // w1 is dc1 in the file; claiming dc2 is refused (w1 stopped first, so
  // this is not a duplicate).
  ASSERT_EQ(c.Script("stop w1").exit_code, 0);
  CommandResult relabel = RunWorker(c, "--id w1 --datacenter dc2");
  EXPECT_EQ(relabel.exit_code, 3) << relabel.err;  // 3: the master refused it (issue 28)
  EXPECT_NE(relabel.err.find("worker 'w1' claims datacenter 'dc2' rack '', but its [[worker]] entry "
                             "says datacenter 'dc1' rack ''"),
            std::string::npos)
      << relabel.err;
  ASSERT_EQ(c.Script("start w1").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return c.LiveWorkers() == 2; }, seconds(30)));
}

}  // namespace
}  // namespace mr::testing
