// Tests for scheduler/random_local_policy.h (the course's lab 2 reference
// solution), one decision at a time; each says why.
#include "scheduler/random_local_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "tests/scheduler/test_host.h"

namespace mr::sched {
namespace {

using test::MakeJob;
using test::MakePolicy;
using test::Map;
using test::TestHost;
using ::testing::ElementsAre;

TEST(RandomLocalPolicyTest, ANodeLocalMapBeforeARemoteOne) {
  TestHost host(MakePolicy("random-local"));
  NodeId a = host.AddNode(0, /*map_slots=*/1), b = host.AddNode(1);
  host.AddJob(MakeJob({{b}, {b}}));
  JobId local = host.AddJob(MakeJob({{b}, {a}}));
  // Only job 1 has a map on a: the random draw is among the jobs with a local map.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(local, 1, a)));
}

TEST(RandomLocalPolicyTest, ARemoteMapWhenNoneIsLocal) {
  TestHost host(MakePolicy("random-local"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(1);
  JobId j = host.AddJob(MakeJob({{b}}));
  // A free slot is not left idle: any map of a random job.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
}

// The same seed gives the same choices (SchedulerEnv::seed), and over many
// seeds each of two equal jobs is drawn about half the time.
TEST(RandomLocalPolicyTest, SeededAndRoughlyUniform) {
  std::map<JobId, int> first;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    std::vector<JobId> picks;
    for (int run = 0; run < 2; ++run) {
      SchedulerEnv env;
      env.seed = seed;
      TestHost host(std::move(MakeScheduler("random-local", {}, env)).value());
      NodeId a = host.AddNode(0, 1);
      host.AddJob(MakeJob({{a}}));
      host.AddJob(MakeJob({{a}}));
      picks.push_back(host.Heartbeat(a).at(0).job);
    }
    EXPECT_EQ(picks[0], picks[1]) << "seed " << seed;
    ++first[picks[0]];
  }
  // 400 draws of a fair coin: 200 ± 60 is beyond 6 standard deviations.
  EXPECT_NEAR(first[0], 200, 60);
  EXPECT_NEAR(first[1], 200, 60);
}

}  // namespace
}  // namespace mr::sched
