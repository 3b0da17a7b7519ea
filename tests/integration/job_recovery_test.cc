// JobTracker restart recovery (Hadoop's mapred.jobtracker.restart.recover):
// the master is SIGKILLed while a job runs and started again; the job must
// go on under the same id and end with the oracle's output, one history
// record, and without re-running the maps whose outputs live workers still
// hold (nor the reduces already committed). The `job run --wait` client
// that followed the job must ride through the restart and exit 0.
//
// No timing is asserted: the test polls `job show --json` until the job has
// reached the point where the master is to be killed (some maps done, or
// some reduces committed), and fails plainly if the job ended first.
#include <future>
#include <map>

#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class JobRecoveryTest : public JobTest, public ::testing::WithParamInterface<std::string> {
 protected:
  // index → (node, attempts) of every task done in `record`.
  static std::map<int, std::pair<std::string, int>> DoneTasks(const json& record, const char* key) {
    std::map<int, std::pair<std::string, int>> done;
    if (!record.is_object() || !record.contains(key)) return done;
    for (const auto& t : record[key]) done[t["index"].get<int>()] = {t["node"], t["attempts"].get<int>()};
    return done;
  }

  // Polls job `id` until `ready(record)` holds while it still runs; that
  // last record. A null record when the job ended first or time ran out.
  static json WaitUntil(const LocalCluster& c, int64_t id, const std::function<bool(const json&)>& ready) {
    json last;
    WaitFor(
        [&] {
          CommandResult r = c.Mrctl("job show --json " + std::to_string(id));
          json j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
          if (!j.is_object()) return false;  // the master is restarting
          if (j["state"] != "running") return true;
          if (!ready(j)) return false;
          last = std::move(j);
          return true;
        },
        120s);
    return last;
  }

  // SIGKILLs the master and starts it again.
  static void RestartMaster(const LocalCluster& c) {
    ASSERT_EQ(c.Script("kill master").exit_code, 0);
    CommandResult started = c.Script("start master");
    ASSERT_EQ(started.exit_code, 0) << started.err;
  }

  // The maps (or reduces) done in `before` are done in `after` on the same
  // node with the same number of attempts: not run again.
  static void ExpectNotRerun(const json& before, const json& after, const char* key) {
    const auto was = DoneTasks(before, key);
    const auto now = DoneTasks(after, key);
    ASSERT_FALSE(was.empty()) << key << ": nothing was done before the restart";
    for (const auto& [index, where] : was) {
      SCOPED_TRACE(std::string(key) + " " + std::to_string(index));
      ASSERT_TRUE(now.count(index));
      EXPECT_EQ(now.at(index).first, where.first) << "ran again elsewhere";
      EXPECT_EQ(now.at(index).second, where.second) << "ran again";
    }
  }

  static void ExpectSensibleFigures(const json& r) {
    const int maps = r["maps_total"];
    const int reduces = r["reduces_total"];
    EXPECT_EQ(r["maps_done"], maps);
    EXPECT_EQ(r["reduces_done"], reduces);
    EXPECT_EQ(r["map_tasks"].size(), static_cast<size_t>(maps));
    EXPECT_EQ(r["reduce_tasks"].size(), static_cast<size_t>(reduces));
    EXPECT_EQ(r["maps_node_local"].get<int>() + r["maps_rack_local"].get<int>() +
                  r["maps_dc_local"].get<int>() + r["maps_off_dc"].get<int>(),
              maps);
    int tasks = 0;
    for (const auto& [worker, n] : r["tasks_per_worker"].items()) tasks += n.get<int>();
    EXPECT_EQ(tasks, maps + reduces);
    EXPECT_GT(r["shuffle_bytes"]["local"].get<int64_t>() + r["shuffle_bytes"]["same_dc"].get<int64_t>() +
                  r["shuffle_bytes"]["other_dc"].get<int64_t>(),
              0);
    // INT counts every attempt's bytes: those of attempts lost to the
    // master's kill (or to a speculative race) are in retried_bytes.
    EXPECT_EQ(r["inter_dc_bytes"].get<int64_t>(),
              r["map_input_bytes"]["other_dc"].get<int64_t>() +
                  r["shuffle_bytes"]["other_dc"].get<int64_t>() +
                  r["output_replication_bytes"]["other_dc"].get<int64_t>() +
                  r["prefetch_inter_dc_bytes"].get<int64_t>() +
                  r["client_inter_dc_bytes"].get<int64_t>() +
                  r["retried_bytes"]["other_dc"].get<int64_t>());
  }

  // The only job's id, once the master lists it.
  static int64_t OnlyJobId(const LocalCluster& c) {
    int64_t id = 0;
    WaitFor(
        [&] {
          json list = json::parse(c.Mrctl("job list --json").out, nullptr, false);
          if (!list.is_array() || list.empty()) return false;
          id = list[0]["id"];
          return true;
        },
        60s);
    return id;
  }

  // Where the maps done in `before` ran is still on record after the
  // restarts: `job logs` finds their logs (a few of them: one mrctl each).
  static void ExpectLogsOnRecord(const LocalCluster& c, int64_t id, const json& before) {
    int checked = 0;
    for (const auto& [index, where] : DoneTasks(before, "map_tasks")) {
      if (++checked > 3) break;
      CommandResult logs = c.Mrctl("job logs " + std::to_string(id) + " m" + std::to_string(index));
      EXPECT_EQ(logs.exit_code, 0) << "map " << index << ": " << logs.err;
      EXPECT_FALSE(logs.out.empty()) << "map " << index;
    }
  }

  // Exactly one record in the history, the job's.
  static void ExpectOneRecord(const LocalCluster& c, int64_t id) {
    json list = c.MrctlJson("job list --json");
    ASSERT_TRUE(list.is_array());
    ASSERT_EQ(list.size(), 1u) << list.dump(2);
    EXPECT_EQ(list[0]["id"], id);
    EXPECT_EQ(list[0]["state"], "succeeded");
  }
};

// One restart while maps run.
TEST_P(JobRecoveryTest, JobRunningWhenTheMasterIsKilledFinishesAfterItRestarts) {
  LocalCluster c(4, 2, "--block-size 131072 --replication 2 --heartbeat-ms 100 --scheduler " + GetParam());
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string text = Generate("text", "48M", 71);
  Put(c, text, "/in/text.txt");

  auto waiter = std::async(std::launch::async, [&] {
    return c.Mrctl("job run wordcount -i /in/text.txt -o /out/wc -r 6 --wait --json");
  });
  const int64_t id = OnlyJobId(c);
  ASSERT_GT(id, 0);
  const json before = WaitUntil(c, id, [](const json& j) {
    return j["maps_done"].get<int>() * 4 >= j["maps_total"].get<int>();
  });
  ASSERT_TRUE(before.is_object()) << "the job ended before the master could be killed";
  RestartMaster(c);

  CommandResult run = waiter.get();
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const json end = json::parse(run.out, nullptr, false);
  ASSERT_TRUE(end.is_object()) << run.out;
  EXPECT_EQ(end["id"], id);
  ASSERT_EQ(end["state"], "succeeded") << end.dump(2);
  ExpectNotRerun(before, end, "map_tasks");
  ExpectSensibleFigures(end);
  ExpectOneRecord(c, id);
  ExpectLogsOnRecord(c, id, before);
  EXPECT_TRUE(Cat(c, "/out/wc") == Oracle("wordcount", text, 6, "", 131072))
      << "output differs from mr-local's";
  json tmp = c.MrctlJson("dfs ls --json /.mr/jobs");
  EXPECT_TRUE(tmp.is_array() && tmp.empty()) << tmp.dump();
}

// Two restarts: one while maps run, one after some reduces committed.
TEST_P(JobRecoveryTest, JobSurvivesTwoRestartsTheSecondWhileReducesCommit) {
  LocalCluster c(4, 2, "--block-size 131072 --replication 2 --heartbeat-ms 100 --scheduler " + GetParam());
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string text = Generate("text", "48M", 72);
  Put(c, text, "/in/text.txt");

  auto waiter = std::async(std::launch::async, [&] {
    return c.Mrctl("job run wordcount -i /in/text.txt -o /out/wc -r 8 --wait --json");
  });
  const int64_t id = OnlyJobId(c);
  ASSERT_GT(id, 0);
  const json first = WaitUntil(c, id, [](const json& j) {
    return j["maps_done"].get<int>() * 4 >= j["maps_total"].get<int>();
  });
  ASSERT_TRUE(first.is_object()) << "the job ended before the master could be killed";
  RestartMaster(c);
  const json second = WaitUntil(c, id, [](const json& j) { return j["reduces_done"].get<int>() >= 1; });
  ASSERT_TRUE(second.is_object()) << "the job ended before the master could be killed again";
  RestartMaster(c);

  CommandResult run = waiter.get();
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const json end = json::parse(run.out, nullptr, false);
  ASSERT_TRUE(end.is_object()) << run.out;
  ASSERT_EQ(end["state"], "succeeded") << end.dump(2);
  ExpectNotRerun(first, end, "map_tasks");
  ExpectNotRerun(second, end, "map_tasks");
  ExpectNotRerun(second, end, "reduce_tasks");
  ExpectSensibleFigures(end);
  ExpectOneRecord(c, id);
  EXPECT_TRUE(Cat(c, "/out/wc") == Oracle("wordcount", text, 8, "", 131072))
      << "output differs from mr-local's";
}

INSTANTIATE_TEST_SUITE_P(Policies, JobRecoveryTest, ::testing::Values("fifo", "joss-t"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace mr::testing
