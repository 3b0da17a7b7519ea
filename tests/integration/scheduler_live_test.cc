// Every registered scheduling policy, live: the master hosts it, real
// workers run what it launches, and a mixed workload — all six jobs,
// submitted together — finishes with the oracle's output and its metrics
// recorded. What a policy decides is tested in tests/scheduler/; this is
// the proof that the master carries out any policy's decisions (launches,
// and the Joint Scheduler's prefetches) without touching master/ or worker/
// for it.
#include "scheduler/scheduler.h"
#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class SchedulerLiveTest : public JobTest, public ::testing::WithParamInterface<std::string> {};

// The figures every finished job must carry, whatever the policy decided.
void ExpectMetricsRecorded(const json& r) {
  SCOPED_TRACE(r["job"].get<std::string>());
  const int64_t maps = r["maps_total"];
  EXPECT_GT(maps, 0);
  EXPECT_EQ(r["maps_done"], maps);
  EXPECT_EQ(r["reduces_done"], r["reduces_total"]);
  // Every map is counted at exactly one locality level.
  EXPECT_EQ(r["maps_node_local"].get<int64_t>() + r["maps_rack_local"].get<int64_t>() +
                r["maps_dc_local"].get<int64_t>() + r["maps_off_dc"].get<int64_t>(),
            maps);
  for (const char* rate : {"vps_locality_rate", "cen_locality_rate", "off_cen_rate"}) {
    EXPECT_GE(r[rate].get<double>(), 0.0) << rate;
    EXPECT_LE(r[rate].get<double>(), 1.0) << rate;
  }
  EXPECT_NEAR(r["vps_locality_rate"].get<double>() + r["cen_locality_rate"].get<double>() +
                  r["off_cen_rate"].get<double>(),
              1.0, 1e-9);
  // The maps read their input (counted at the sockets, by peer; zstd on the
  // wire, so not the input's size) and the reduces fetched theirs; INT is
  // the other-datacenter part of all of it.
  auto sum = [](const json& t) {
    return t["local"].get<int64_t>() + t["same_dc"].get<int64_t>() + t["other_dc"].get<int64_t>();
  };
  EXPECT_GT(sum(r["map_input_bytes"]), 0);
  EXPECT_GT(sum(r["shuffle_bytes"]), 0);
  EXPECT_EQ(r["inter_dc_bytes"].get<int64_t>(),
            r["map_input_bytes"]["other_dc"].get<int64_t>() +
                r["shuffle_bytes"]["other_dc"].get<int64_t>() +
                r["output_replication_bytes"]["other_dc"].get<int64_t>() +
                r["prefetch_inter_dc_bytes"].get<int64_t>() +
                r["client_inter_dc_bytes"].get<int64_t>());
  EXPECT_GT(r["jtt_ms"].get<double>(), 0);
  int tasks = 0;
  for (const auto& [worker, n] : r["tasks_per_worker"].items()) tasks += n.get<int>();
  EXPECT_EQ(tasks, maps + r["reduces_total"].get<int>());
}

TEST_P(SchedulerLiveTest, AMixedWorkloadOfAllSixJobsMatchesTheOracle) {
  const std::string policy = GetParam();
  LocalCluster c(4, 2, "--block-size 131072 --replication 1 --heartbeat-ms 100 --scheduler-seed 7 --scheduler " +
                           policy);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const Inputs in = PutInputs(c, "512K", "384K", 31);

  struct Case {
    std::string job, dfs_input, local_input, params;
    int64_t id = 0;
  };
  std::vector<Case> cases = {
      {"wordcount", "/in/text.txt", in.text, ""},
      {"grep", "/in/web.xml", in.web, "pattern=<[a-z]+>"},
      {"sort", "/in/text.txt", in.text, ""},
      {"permu", "/in/dna.fa", in.dna, ""},
      {"sequencecount", "/in/text.txt", in.text, ""},
      {"invertedindex", "/in/docs", in.docs, ""},
  };
  // All at once, so the policy orders jobs as well as placing tasks.
  for (Case& k : cases) {
    CommandResult r = c.Mrctl("job run " + k.job + " -i " + k.dfs_input + " -o /out/" + k.job +
                              " -r 2 --json" + ParamFlags(k.params, "-p"));
    ASSERT_EQ(r.exit_code, 0) << k.job << ": " << r.err;
    k.id = json::parse(r.out)["id"].get<int64_t>();
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const Case& k : cases) {
          if (c.MrctlJson("job show --json " + std::to_string(k.id))["state"] == "running") return false;
        }
        return true;
      },
      180s));
  for (const Case& k : cases) {
    SCOPED_TRACE(k.job);
    json r = c.MrctlJson("job show --json " + std::to_string(k.id));
    ASSERT_EQ(r["state"], "succeeded") << r.dump(2);
    EXPECT_EQ(r["scheduler"], policy);
    EXPECT_EQ(r["scheduler_seed"], 7) << "[scheduler] seed is recorded in every job's record";
    ExpectMetricsRecorded(r);
    std::string expected = Oracle(k.job, k.local_input, 2, k.params, 131072);
    if (k.job == "invertedindex") expected = ReplaceAll(expected, in.docs, "/in/docs");
    EXPECT_TRUE(Cat(c, "/out/" + k.job) == expected);
  }
}

// The names come from the registry, linked into this binary: a policy added
// to scheduler/registry.cc relinks it, and gtest_discover_tests (run after
// each link) then lists the new policy's test. Reading `mrctl schedulers`
// at discovery time instead once skipped a new policy: only mrctl was
// relinked, so ctest ran the old list (issue 16).
std::vector<std::string> Policies() {
  std::vector<std::string> names;
  for (const sched::PolicyInfo* p : sched::RegisteredPolicies()) names.push_back(p->name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, SchedulerLiveTest, ::testing::ValuesIn(Policies()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return n;
                         });

}  // namespace
}  // namespace mr::testing
