// mr-workload on a real cluster: a tiny workload of 4 jobs of 2 types from a
// scenario file — inputs generated and put, jobs submitted at the file's
// (scaled) times, the runner waits for all and writes one CSV and JSON row
// per job. Every output is checked against mr-local (the oracle), by the test
// and by mr-workload --verify.
#include <filesystem>
#include <fstream>

#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;

class WorkloadRunnerTest : public JobTest {
 protected:
  // A scenario of 4 jobs (2 wordcount, 2 grep, 2 maps each) arriving 1 s
  // apart in simulated time, 0.25 s apart live; 128 KiB live blocks.
  std::string WriteScenario(const std::string& placement) {
    const std::string path = work_ + "/tiny.toml";
    std::ofstream(path) << R"(name = "tiny"
seed = 3
[cluster]
nodes = 4
datacenters = 2
[data]
replication = 1
placement = ")" << placement
                        << R"("
[[job_types]]
name = "wc"
input_type = "text"
map = 1000
[[job_types]]
name = "grep"
input_type = "web"
map = 1000
[workload]
arrival = "fixed"
mean_interarrival_ms = 1000
classes = [ { type = "wc", maps = 2, count = 2 }, { type = "grep", maps = 2, count = 2 } ]
[[schedulers]]
name = "fifo"
[live]
block_mb = 0.125
time_scale = 4
[[live.jobs]]
type = "wc"
job = "wordcount"
[[live.jobs]]
type = "grep"
job = "grep"
params = { pattern = "<[a-z]+>" }
)";
    return path;
  }

  CommandResult RunWorkload(const LocalCluster& c, const std::string& file,
                            const std::string& extra) {
    return Shell(Quote(BuildDir() + "/sim/mr-workload") + " run " + Quote(file) + " --config " +
                 Quote(c.config()) + " --mrctl " + Mrctl() + " --out " + Quote(work_ + "/out") +
                 " --keep-inputs --timeout 300 " + extra);
  }
};

TEST_F(WorkloadRunnerTest, ATinyWorkloadRunsAndEveryOutputMatchesTheOracle) {
  LocalCluster c(4, 2, "--heartbeat-ms 100 --scheduler fifo");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = WriteScenario("uniform");
  const CommandResult dry =
      Shell(Quote(BuildDir() + "/sim/mr-workload") + " run " + Quote(file) + " --dry-run");
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(dry.out, Shell(Quote(BuildDir() + "/sim/mr-sim") + " jobs " + Quote(file)).out);

  const CommandResult run = RunWorkload(c, file, "--scheduler fair --dfs-root /wl");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("4 jobs, 0 failed"), std::string::npos) << run.out;

  std::ifstream csv(work_ + "/out/jobs.csv");
  std::vector<std::string> lines;
  for (std::string line; std::getline(csv, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 5u);  // a header and a row per job
  EXPECT_EQ(lines[0].rfind("id,job_id,type,job,input,maps,reduces,", 0), 0u) << lines[0];

  std::ifstream js(work_ + "/out/jobs.json");
  const json summary = json::parse(js, nullptr, false);
  ASSERT_TRUE(summary.is_object());
  EXPECT_GT(summary["wtt_ms"].get<int64_t>(), 0);
  ASSERT_EQ(summary["jobs"].size(), 4u);
  int wc = 0, grep = 0;
  for (const json& row : summary["jobs"]) {
    SCOPED_TRACE(row.dump());
    EXPECT_EQ(row["state"], "succeeded");
    EXPECT_EQ(row["policy"], "fair");  // --scheduler switched the master first
    EXPECT_EQ(row["maps"], 2);
    EXPECT_EQ(row["reduces"], 1);
    const std::string type = row["type"], id = std::to_string(row["id"].get<int>());
    (type == "wc" ? wc : grep)++;
    const std::string local =
        work_ + "/out/inputs/" + id + "-" + type + (type == "wc" ? ".txt" : ".xml");
    const std::string dfs =
        std::string("/wl/in/") + id + "-" + type + (type == "wc" ? ".txt" : ".xml");
    EXPECT_EQ(CatSha(c, dfs), Sha256OfFile(local));
    EXPECT_EQ(row["output"], "/wl/out/" + id + "-" + type);
    const std::string params = type == "grep" ? "pattern=<[a-z]+>" : "";
    EXPECT_EQ(Cat(c, row["output"]), Oracle(row["job"], local, 1, params, 131072));
  }
  EXPECT_EQ(wc, 2);
  EXPECT_EQ(grep, 2);
  // Every record whole, in the rows' order.
  std::ifstream rs(work_ + "/out/records.json");
  const json records = json::parse(rs, nullptr, false);
  ASSERT_TRUE(records.is_array());
  ASSERT_EQ(records.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(records[i]["id"], summary["jobs"][i]["job_id"]);
    EXPECT_TRUE(records[i].contains("map_tasks"));
  }
}

// Job-datacenter placement: each input put with `mrctl dfs put --datacenter`
// of its job's datacenter (replication 1, so every block is there).
TEST_F(WorkloadRunnerTest, JobDatacenterPlacementPutsEachInputInItsJobsDatacenter) {
  LocalCluster c(4, 2, "--heartbeat-ms 100 --scheduler fifo");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = WriteScenario("job-datacenter");
  const CommandResult list = Shell(Quote(BuildDir() + "/sim/mr-sim") + " jobs " + Quote(file));
  const std::string cache = work_ + "/oracle-cache";
  const CommandResult run =
      RunWorkload(c, file, "--dfs-root /wl --verify --oracle-cache " + Quote(cache));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.err.find("4 outputs compared with mr-local's, 0 differ"), std::string::npos)
      << run.err;
  int cached = 0;  // one oracle per distinct input and job
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(cache)) ++cached;
  EXPECT_EQ(cached, 4);
  std::ifstream js(work_ + "/out/jobs.json");
  const json summary = json::parse(js, nullptr, false);
  ASSERT_EQ(summary["jobs"].size(), 4u);
  for (const json& row : summary["jobs"]) {
    EXPECT_EQ(row["verified"], true) << row.dump();
    const std::string dc = row["datacenter"];
    EXPECT_TRUE(dc == "dc1" || dc == "dc2") << dc;
    const std::string type = row["type"], id = std::to_string(row["id"].get<int>());
    const json stat =
        c.MrctlJson("dfs stat --json /wl/in/" + id + "-" + type + (type == "wc" ? ".txt" : ".xml"));
    for (const json& b : stat["blocks"]) {
      for (const json& d : b["datacenters"]) EXPECT_EQ(d, dc) << stat.dump();
    }
  }
}

// --verify must be able to fail: --after-jobs (run when every job has ended,
// before the check) replaces job 1's output with other bytes, so the run
// exits 1, names the job, and marks its row verified = false while the
// others stay true.
TEST_F(WorkloadRunnerTest, VerifyReportsAnOutputThatDiffersFromMrLocal) {
  LocalCluster c(4, 2, "--heartbeat-ms 100 --scheduler fifo");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string file = WriteScenario("uniform");
  const std::string dry =
      Shell(Quote(BuildDir() + "/sim/mr-sim") + " jobs " + Quote(file)).out;  // row 1: job 1
  const std::string first = dry.substr(dry.find('\n') + 1);
  const std::string type = first.substr(2, first.find(',', 2) - 2);
  const std::string part = "/wl/out/1-" + type + "/part-00000";
  const std::string mrctl = Mrctl() + " --config " + Quote(c.config());
  const std::string tamper =
      mrctl + " dfs rm " + part + " && " + mrctl + " dfs put /etc/hostname " + part;
  const CommandResult run =
      RunWorkload(c, file, "--dfs-root /wl --verify --after-jobs " + Quote(tamper));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("job 1 (" + std::string(type == "wc" ? "wordcount" : "grep")),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("differs from mr-local's"), std::string::npos) << run.err;
  std::ifstream js(work_ + "/out/jobs.json");
  const json summary = json::parse(js, nullptr, false);
  ASSERT_EQ(summary["jobs"].size(), 4u);
  for (const json& row : summary["jobs"]) {
    EXPECT_EQ(row["state"], "succeeded");
    EXPECT_EQ(row["verified"], row["id"] != 1) << row.dump();
  }
}

}  // namespace
}  // namespace mr::testing
