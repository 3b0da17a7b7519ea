// Every registered scheduling policy, live: the master hosts it, real
// workers run what it launches, and two jobs submitted together finish with
// the oracle's output. What a policy decides is tested in tests/scheduler/;
// this is the proof that the master carries out any policy's decisions
// (launches, and the Joint Scheduler's prefetches) without touching
// master/ or worker/ for it.
#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class SchedulerLiveTest : public JobTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(SchedulerLiveTest, RunsJobsToTheOraclesOutput) {
  const std::string policy = GetParam();
  LocalCluster c(4, 2, "--block-size 131072 --replication 1 --heartbeat-ms 100 --scheduler " + policy);
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string text = Generate("text", "1M", 31);
  const std::string dna = Generate("dna", "512K", 32);
  Put(c, text, "/in/text.txt");
  Put(c, dna, "/in/dna.fa");
  // Two jobs at once, so the policy orders jobs as well as placing tasks.
  CommandResult a = c.Mrctl("job run wordcount -i /in/text.txt -o /out/wc -r 2 --json");
  CommandResult b = c.Mrctl("job run permu -i /in/dna.fa -o /out/permu -r 2 --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const int64_t ids[2] = {json::parse(a.out)["id"].get<int64_t>(), json::parse(b.out)["id"].get<int64_t>()};
  ASSERT_TRUE(WaitFor(
      [&] {
        for (int64_t id : ids) {
          if (c.MrctlJson("job show --json " + std::to_string(id))["state"] == "running") return false;
        }
        return true;
      },
      120s));
  for (int64_t id : ids) {
    json r = c.MrctlJson("job show --json " + std::to_string(id));
    EXPECT_EQ(r["state"], "succeeded") << r.dump(2);
    EXPECT_EQ(r["scheduler"], policy);
  }
  EXPECT_TRUE(Cat(c, "/out/wc") == Oracle("wordcount", text, 2, "", 131072));
  EXPECT_TRUE(Cat(c, "/out/permu") == Oracle("permu", dna, 2, "", 131072));
}

// The names come from the registry (mrctl schedulers --json), so a new
// policy is covered without editing this file.
std::vector<std::string> Policies() {
  CommandResult r = Shell(Quote(BuildDir() + "/tools/mrctl") + " schedulers --json");
  std::vector<std::string> names;
  auto j = json::parse(r.out, nullptr, false);
  if (j.is_array()) {
    for (const auto& p : j) names.push_back(p["name"]);
  }
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
