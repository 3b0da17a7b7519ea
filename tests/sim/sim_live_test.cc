// One workload for both worlds: the job list mr-sim runs is the one the
// live runner (mr-workload) runs; job-datacenter placement; the [live]
// table of a scenario file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/host.h"
#include "sim/live_runner.h"
#include "sim/scenario_file.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "tests/sim/sim_test_util.h"

namespace mr::sim {
namespace {

// A host's cluster for `sc` (its ClusterState places nodes in datacenters).
struct Cluster {
  explicit Cluster(const Scenario& sc) : host(sc, none) {}
  const Workload none;  // declared first: the host refers to it
  SimHost host;
};

std::string Shipped(const std::string& name) {
  return test::SourceDir() + "/sim/scenarios/" + name + ".toml";
}

// Every replica of every block of a job lies in the job's datacenter; the
// datacenters are drawn per job, reproducibly, and all of them are used.
TEST(SimLive, JobDatacenterPlacementKeepsAJobsBlocksInItsDatacenter) {
  Scenario sc = test::SmallScenario(12, 3, 0, 30, 4, 1000, 100);
  sc.data.placement = "job-datacenter";
  sc.data.replication = 2;
  auto w = MakeWorkload(sc);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  Cluster c(sc);
  std::set<int> used;
  for (const SimJob& j : w->jobs) {
    ASSERT_GE(j.datacenter, 0);
    ASSERT_LT(j.datacenter, 3);
    used.insert(j.datacenter);
    for (uint64_t b : j.blocks) {
      const auto& r = w->replicas[b];
      ASSERT_EQ(r.size(), 2u);
      EXPECT_NE(r[0], r[1]);
      for (sched::NodeId n : r) EXPECT_EQ(c.host.state().node(n).datacenter, j.datacenter);
    }
  }
  EXPECT_EQ(used.size(), 3u);
  auto again = MakeWorkload(sc);
  ASSERT_TRUE(again.ok());
  for (size_t i = 0; i < w->jobs.size(); ++i)
    EXPECT_EQ(again->jobs[i].datacenter, w->jobs[i].datacenter);
  // Other placements name no job datacenter.
  sc.data.placement = "uniform";
  for (const PlannedJob& j : *PlanJobs(sc)) EXPECT_EQ(j.datacenter, -1);
}

TEST(SimLive, JobDatacenterNeedsOwnBlocks) {
  auto sc = LoadScenario(Shipped("joss-mixed-live"), {{"data.pool_blocks", "10"}});
  ASSERT_FALSE(sc.ok());
  EXPECT_NE(sc.status().message().find("job-datacenter"), std::string::npos)
      << sc.status().ToString();
}

// The list PlanJobs gives (what mr-workload runs) is the list the
// simulator runs, job for job, for every shipped live file; the same seed
// gives the same list, another seed another.
TEST(SimLive, TheLiveListIsTheSimulatedList) {
  for (const char* name : {"joss-small-live", "joss-mixed-live", "locality-live"}) {
    SCOPED_TRACE(name);
    auto sc = LoadScenario(Shipped(name), {});
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    auto list = PlanJobs(*sc);
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    auto w = MakeWorkload(*sc);
    ASSERT_TRUE(w.ok());
    auto run = RunOne(*sc, *w, test::Policy("fifo"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    ASSERT_EQ(run->jobs.size(), list->size());
    for (const JobRecord& j : run->jobs) {
      const PlannedJob& p = (*list)[static_cast<size_t>(j.id)];
      EXPECT_EQ(p.id, j.id + 1);
      EXPECT_EQ(p.type, j.type);
      EXPECT_EQ(p.maps, j.maps);
      EXPECT_EQ(p.reduces, j.reduces);
      EXPECT_EQ(p.submit_ms, j.submit_ms);
    }
    // Every type the list uses has a live job.
    for (const PlannedJob& p : *list) EXPECT_NE(sc->live.Find(p.type), nullptr) << p.type;
    EXPECT_EQ(JobListCsv(*PlanJobs(*sc)), JobListCsv(*list));
    auto other = LoadScenario(Shipped(name), {{"seed", "2"}});
    ASSERT_TRUE(other.ok());
    EXPECT_NE(JobListCsv(*PlanJobs(*other)), JobListCsv(*list));
  }
}

// The [live] table: read strictly, keys named by their full path.
TEST(SimLive, LiveTable) {
  auto sc = LoadScenario(Shipped("joss-mixed-live"), {});
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(sc->live.block_mb, 1);
  EXPECT_EQ(sc->live.time_scale, 50);
  ASSERT_NE(sc->live.Find("grep"), nullptr);
  EXPECT_EQ(sc->live.Find("grep")->job, "grep");
  EXPECT_EQ(sc->live.Find("grep")->input, "web");  // the type's input_type
  EXPECT_EQ(sc->live.Find("grep")->params.at("pattern"), "<[a-z]+>");
  EXPECT_EQ(sc->live.Find("permu")->input, "dna");
  auto error = [](const std::vector<Override>& o) {
    auto bad = LoadScenario(Shipped("joss-mixed-live"), o);
    return bad.ok() ? std::string("ok") : bad.status().message();
  };
  EXPECT_NE(error({{"live.speed", "3"}}).find("unknown key 'live.speed'"), std::string::npos);
  EXPECT_NE(error({{"live.time_scale", "0"}}).find("'live.time_scale' must be in"),
            std::string::npos);
  EXPECT_NE(error({{"live.jobs.0.type", "\"nope\""}}).find("unknown job type 'nope'"),
            std::string::npos);
  EXPECT_NE(error({{"live.jobs.0.input", "\"mp3\""}})
                .find("'live.jobs[0].input' must be one of text, web, dna"),
            std::string::npos);
}

// mr-workload --dry-run prints exactly `mr-sim jobs`'s list; with
// --commands, the puts of a job-datacenter workload name the job's
// datacenter (`mrctl dfs put --datacenter`), and the submissions the live
// job, its reducers, parameters and one output replica.
TEST(SimLive, DryRunPrintsTheListAndTheCommands) {
  LiveRunOptions o;
  o.file = Shipped("joss-mixed-live");
  o.dry_run = true;
  o.dfs_root = "/w";
  std::ostringstream out, err;
  ASSERT_EQ(RunLiveWorkload(o, out, err), 0) << err.str();
  auto sc = LoadScenario(o.file, {});
  const std::vector<PlannedJob> list = *PlanJobs(*sc);
  EXPECT_EQ(out.str(), JobListCsv(list));

  o.commands = true;
  std::ostringstream cmds;
  ASSERT_EQ(RunLiveWorkload(o, cmds, err), 0) << err.str();
  std::istringstream lines(cmds.str());
  int puts = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("put ", 0) != 0) continue;
    const PlannedJob& p = list[static_cast<size_t>(puts++)];
    const std::string dc = p.datacenter == 0 ? "dc1" : "dc2";
    EXPECT_NE(line.find("'--datacenter' '" + dc + "'"), std::string::npos) << line;
    EXPECT_NE(line.find("'-b' '1048576'"), std::string::npos) << line;
    EXPECT_NE(line.find("'-r' '1'"), std::string::npos) << line;
  }
  EXPECT_EQ(puts, static_cast<int>(list.size()));
  EXPECT_NE(cmds.str().find("'job' 'run' 'grep' '-i' '/w/in/"), std::string::npos) << cmds.str();
  EXPECT_NE(cmds.str().find("'-p' 'pattern=<[a-z]+>'"), std::string::npos);
  // One output replica, as the simulator models (no output replication).
  EXPECT_NE(cmds.str().find("'--output-replication' '1'"), std::string::npos) << cmds.str();

  // A bad [live] table is one line and exit 2.
  o.set = {{"live.jobs.4.type", "\"wc\""}};
  std::ostringstream err2;
  EXPECT_EQ(RunLiveWorkload(o, out, err2), 2);
  EXPECT_NE(err2.str().find("given twice"), std::string::npos) << err2.str();
}

}  // namespace
}  // namespace mr::sim
