// `mrctl scheduler set`: the policy changes between workloads without
// wiping the DFS or the history. Each job's record names the policy (and
// its parameters) it ran under; a switch is refused while a job runs or
// waits; a restarted master keeps the last choice.
#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class SchedulerSwitchTest : public JobTest {};

json Record(const LocalCluster& c, int64_t id) {
  return c.MrctlJson("job show " + std::to_string(id) + " --json");
}

TEST_F(SchedulerSwitchTest, JobsRecordTheirOwnPolicyAndTheDfsSurvivesTheSwitch) {
  LocalCluster c(2, 2, "--block-size 131072 --replication 2 --heartbeat-ms 100 --scheduler fifo");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string text = Generate("text", "384K", 41);
  Put(c, text, "/in/text.txt");
  const std::string before = CatSha(c, "/in/text.txt");
  ASSERT_EQ(before, Sha256OfFile(text));
  const std::string oracle = Oracle("wordcount", text, 2, "", 131072);

  json show = c.MrctlJson("scheduler show --json");
  EXPECT_EQ(show["name"], "fifo");
  EXPECT_EQ(show["source"], "file");

  json first = RunJob(c, "wordcount", "/in/text.txt", "/out/a", 2, "");
  ASSERT_EQ(first["state"], "succeeded") << first.dump();

  // Bad names and parameters: one line naming the valid ones, nothing changes.
  CommandResult bad = c.Mrctl("scheduler set no-such-policy");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("fair"), std::string::npos) << bad.err;
  bad = c.Mrctl("scheduler set fair -p no_such_param=1");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("node_locality_delay_ms"), std::string::npos) << bad.err;
  bad = c.Mrctl("scheduler set fair -p node_locality_delay_ms=soon");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(c.MrctlJson("scheduler show --json")["name"], "fifo");

  CommandResult set = c.Mrctl("scheduler set fair -p node_locality_delay_ms=300 --json");
  ASSERT_EQ(set.exit_code, 0) << set.err;
  show = json::parse(set.out);
  EXPECT_EQ(show["name"], "fair");
  EXPECT_EQ(show["source"], "set");
  EXPECT_EQ(show["params"]["node_locality_delay_ms"], "300");
  EXPECT_EQ(show["params"]["rack_locality_delay_ms"], "-1");  // defaults are filled in

  json second = RunJob(c, "wordcount", "/in/text.txt", "/out/b", 2, "");
  ASSERT_EQ(second["state"], "succeeded") << second.dump();

  // Each record names its own policy, also in the list.
  const json a = Record(c, first["id"]), b = Record(c, second["id"]);
  EXPECT_EQ(a["scheduler"], "fifo");
  EXPECT_EQ(b["scheduler"], "fair");
  EXPECT_EQ(b["scheduler_params"]["node_locality_delay_ms"], "300");
  EXPECT_EQ(a["scheduler_params"].count("node_locality_delay_ms"), 0u);
  const json list = c.MrctlJson("job list --json");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["scheduler"], "fifo");
  EXPECT_EQ(list[1]["scheduler"], "fair");
  CommandResult table = c.Mrctl("job list");
  EXPECT_NE(table.out.find("policy"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("fair(assign_multiple=true,node_locality_delay_ms=300"),
            std::string::npos)
      << table.out;

  // The DFS is intact: the input, and both outputs are the oracle's.
  EXPECT_EQ(CatSha(c, "/in/text.txt"), before);
  EXPECT_EQ(Cat(c, "/out/a"), oracle);
  EXPECT_EQ(Cat(c, "/out/b"), oracle);

  // A restarted master keeps the last choice (the file still says fifo).
  ASSERT_EQ(c.Script("stop master").exit_code, 0);
  ASSERT_EQ(c.Script("start master").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return c.LiveWorkers() == 2; }, 30s));
  show = c.MrctlJson("scheduler show --json");
  EXPECT_EQ(show["name"], "fair");
  EXPECT_EQ(show["source"], "set");
  EXPECT_EQ(c.MrctlJson("job list --json").size(), 2u);
}

TEST_F(SchedulerSwitchTest, ASwitchIsRefusedWhileAJobWaits) {
  LocalCluster c(2, 1, "--block-size 131072 --replication 2 --heartbeat-ms 100 --scheduler fifo");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string text = Generate("text", "256K", 43);
  Put(c, text, "/in/text.txt");
  // With every worker stopped the job cannot finish: it is surely running
  // (waiting for slots) when the switch is asked for.
  ASSERT_EQ(c.Script("stop w1").exit_code, 0);
  ASSERT_EQ(c.Script("stop w2").exit_code, 0);
  CommandResult run = c.Mrctl("job run wordcount -i /in/text.txt -o /out/w -r 1 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const int64_t id = json::parse(run.out)["id"];
  CommandResult set = c.Mrctl("scheduler set fair");
  EXPECT_EQ(set.exit_code, 1);
  EXPECT_NE(set.err.find("cannot switch the scheduler while 1 job(s) run or wait"),
            std::string::npos)
      << set.err;
  EXPECT_EQ(std::count(set.err.begin(), set.err.end(), '\n'), 1) << set.err;
  EXPECT_EQ(c.MrctlJson("scheduler show --json")["name"], "fifo");

  ASSERT_EQ(c.Script("start w1").exit_code, 0);
  ASSERT_EQ(c.Script("start w2").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return Record(c, id)["state"] != "running"; }, 90s));
  EXPECT_EQ(Record(c, id)["state"], "succeeded");
  EXPECT_EQ(Record(c, id)["scheduler"], "fifo");
  set = c.Mrctl("scheduler set fair");
  EXPECT_EQ(set.exit_code, 0) << set.err;
}

}  // namespace
}  // namespace mr::testing
