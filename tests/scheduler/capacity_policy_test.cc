// Tests for scheduler/capacity_policy.h, one heartbeat decision at a time;
// each says why the policy must decide so (baselines.md §4).
#include "scheduler/capacity_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/scheduler/test_host.h"

namespace mr::sched {
namespace {

using test::MakeJob;
using test::MakePolicy;
using test::Map;
using test::Reduce;
using test::TestHost;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// `count` maps whose block is on every node in `replicas`.
std::vector<std::vector<NodeId>> Blocks(int count, std::vector<NodeId> replicas) {
  return std::vector<std::vector<NodeId>>(static_cast<size_t>(count), replicas);
}

// A job filed in queue `pool` for `user`.
Job In(Job job, const std::string& pool, const std::string& user = "u") {
  job.pool = pool;
  job.user = user;
  return job;
}

CapacityPolicy& Capacity(TestHost& host) { return static_cast<CapacityPolicy&>(host.policy()); }

TEST(CapacityPolicyTest, QueuesTakeTurnsByUsedOverCapacity) {
  TestHost host(MakePolicy("capacity", {{"queues", std::string("a:50,b:50")}}));
  NodeId n = host.AddNode(0, /*map_slots=*/4);
  JobId ja = host.AddJob(In(MakeJob(Blocks(10, {n})), "a"));
  JobId jb = host.AddJob(In(MakeJob(Blocks(10, {n})), "b"));
  // Both at 0/2: a wins the tie (listed first); then b is emptier (0/2 <
  // 1/2); then a tie again at 1/2; then b.
  EXPECT_THAT(host.Heartbeat(n),
              ElementsAre(Map(ja, 0, n), Map(jb, 0, n), Map(ja, 1, n), Map(jb, 1, n)));
}

TEST(CapacityPolicyTest, SlotsFollowTheCapacities) {
  TestHost host(MakePolicy("capacity", {{"queues", std::string("a:75,b:25")}}));
  NodeId n = host.AddNode(0, 4);
  JobId ja = host.AddJob(In(MakeJob(Blocks(10, {n})), "a"));
  JobId jb = host.AddJob(In(MakeJob(Blocks(10, {n})), "b"));
  // Capacities 3 and 1 slots: a (0/3 ties 0/1, listed first), b (0/1 <
  // 1/3), then a twice (1/3 and 2/3 < b's 1/1).
  EXPECT_THAT(host.Heartbeat(n),
              ElementsAre(Map(ja, 0, n), Map(jb, 0, n), Map(ja, 1, n), Map(ja, 2, n)));
}

TEST(CapacityPolicyTest, UserLimitFactorOneCapsALoneUserAtItsQueuesCapacity) {
  TestHost host(MakePolicy("capacity", {{"queues", std::string("a:50,b:50")}}));
  NodeId n = host.AddNode(0, 4);
  JobId j = host.AddJob(In(MakeJob(Blocks(10, {n})), "a"));
  // Queue b is idle, but limit = floor(capacity 2 × factor 1) = 2: no
  // elasticity, two slots stay free.
  EXPECT_THAT(host.Heartbeat(n), ElementsAre(Map(j, 0, n), Map(j, 1, n)));
}

TEST(CapacityPolicyTest, AUserLimitFactorAboveOneLendsIdleCapacity) {
  TestHost host(
      MakePolicy("capacity", {{"queues", std::string("a:50,b:50")}, {"user_limit_factor", 2.0}}));
  NodeId n = host.AddNode(0, 4);
  JobId j = host.AddJob(In(MakeJob(Blocks(10, {n})), "a"));
  // limit = floor(2 × 2) = 4: the user may borrow b's idle slots.
  EXPECT_THAT(host.Heartbeat(n),
              ElementsAre(Map(j, 0, n), Map(j, 1, n), Map(j, 2, n), Map(j, 3, n)));
}

TEST(CapacityPolicyTest, MaximumCapacityBoundsBorrowing) {
  TestHost host(MakePolicy("capacity",
                           {{"queues", std::string("a:50:75,b:50")}, {"user_limit_factor", 2.0}}));
  NodeId n = host.AddNode(0, 4);
  JobId j = host.AddJob(In(MakeJob(Blocks(10, {n})), "a"));
  // The user could take 4, but the queue stops at floor(75 % × 4) = 3.
  EXPECT_THAT(host.Heartbeat(n), ElementsAre(Map(j, 0, n), Map(j, 1, n), Map(j, 2, n)));
}

TEST(CapacityPolicyTest, FifoWithinAQueueLetsTheFirstUserTakeAllByDefault) {
  TestHost host(MakePolicy("capacity"));
  NodeId n = host.AddNode(0, 4);
  JobId alice = host.AddJob(In(MakeJob(Blocks(10, {n})), "default", "alice"));
  host.AddJob(In(MakeJob(Blocks(10, {n})), "default", "bob"));
  // minimum-user-limit-percent 100: limit = max(ceil(4 / 2), 4) = 4, so
  // the older job keeps every slot.
  EXPECT_THAT(host.Heartbeat(n),
              ElementsAre(Map(alice, 0, n), Map(alice, 1, n), Map(alice, 2, n), Map(alice, 3, n)));
}

TEST(CapacityPolicyTest, MinimumUserLimitSplitsAQueueAmongActiveUsers) {
  TestHost host(MakePolicy("capacity", {{"minimum_user_limit_percent", int64_t{50}}}));
  NodeId n = host.AddNode(0, 4);
  JobId alice = host.AddJob(In(MakeJob(Blocks(10, {n})), "default", "alice"));
  JobId bob = host.AddJob(In(MakeJob(Blocks(10, {n})), "default", "bob"));
  // Two active users at 50 %: limit = max(ceil(4 / 2), ceil(50 × 4 / 100))
  // = 2 each, so alice stops at 2 and bob gets the rest.
  EXPECT_THAT(host.Heartbeat(n),
              ElementsAre(Map(alice, 0, n), Map(alice, 1, n), Map(bob, 0, n), Map(bob, 1, n)));
}

TEST(CapacityPolicyTest, AJobMustMissEnoughOpportunitiesBeforeAnOffSwitchMap) {
  TestHost host(MakePolicy("capacity"));
  NodeId a = host.AddNode(0, /*map_slots=*/1);
  NodeId b = host.AddNode(1, 0), c = host.AddNode(1, 0);
  host.AddNode(1, 0);
  JobId j = host.AddJob(MakeJob({{b}, {c}, {b}, {c}}));
  // waitFactor = 2 hosts / 4 nodes = 0.5; the gate needs more than
  // min(4 maps, 4 nodes) × 0.5 = 2 missed opportunities.
  EXPECT_THAT(host.Heartbeat(a), IsEmpty());  // 1 missed
  EXPECT_THAT(host.Heartbeat(a), IsEmpty());  // 2 missed: not more than 2
  EXPECT_EQ(Capacity(host).scheduling_opportunities(j), 2);
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));  // 3 > 2: off-switch
  // An off-switch map does not reset the count; only a local one does.
  EXPECT_EQ(Capacity(host).scheduling_opportunities(j), 3);
}

TEST(CapacityPolicyTest, AnExplicitWaitFactorOfZeroNeverWaits) {
  TestHost host(MakePolicy("capacity", {{"locality_wait_factor", 0.0}}));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(1, 0);
  JobId j = host.AddJob(MakeJob({{b}, {b}}));
  // 0 × anything < 1 missed opportunity: the first ask may go off-switch.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
}

TEST(CapacityPolicyTest, ALocalMapResetsTheMissedOpportunities) {
  TestHost host(MakePolicy("capacity"));
  NodeId a = host.AddNode(0, 2), b = host.AddNode(1, 0);
  JobId j = host.AddJob(MakeJob({{b}, {a}, {b}}));
  // The local map resets the count to 0; the ask for the second slot
  // counts 1, and min(3, 2) × (2 / 2) = 2 is not < 1: no off-switch yet.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 1, a)));
  EXPECT_EQ(Capacity(host).scheduling_opportunities(j), 1);
}

TEST(CapacityPolicyTest, AnOffSwitchMapEndsMapAssignmentByDefault) {
  for (int64_t after : {0, 1}) {
    TestHost host(MakePolicy(
        "capacity", {{"locality_wait_factor", 0.0}, {"maximum_tasks_after_offswitch", after}}));
    NodeId a = host.AddNode(0, 3), b = host.AddNode(1, 0);
    JobId remote = host.AddJob(MakeJob({{b}, {b}}));
    JobId local = host.AddJob(MakeJob({{a}, {a}}));
    std::vector<test::Launch> got = host.Heartbeat(a);
    if (after == 0) {
      // The head job's off-switch map ends the heartbeat: a keeps two free
      // slots rather than take more remote work.
      EXPECT_THAT(got, ElementsAre(Map(remote, 0, a)));
    } else {
      // One more map is allowed, but no second off-switch one: the later
      // job's local map.
      EXPECT_THAT(got, ElementsAre(Map(remote, 0, a), Map(local, 0, a)));
    }
  }
}

TEST(CapacityPolicyTest, MaximumTasksPerHeartbeatCapsMaps) {
  TestHost host(MakePolicy("capacity", {{"maximum_tasks_per_heartbeat", int64_t{2}}}));
  NodeId n = host.AddNode(0, 4);
  JobId j = host.AddJob(MakeJob(Blocks(10, {n})));
  EXPECT_THAT(host.Heartbeat(n), ElementsAre(Map(j, 0, n), Map(j, 1, n)));  // 2 of 4 slots
}

TEST(CapacityPolicyTest, OneReducePerHeartbeatAndNotBeforeSlowStart) {
  TestHost host(MakePolicy("capacity"));
  NodeId n = host.AddNode(0, /*map_slots=*/2, /*reduce_slots=*/3);
  JobId j = host.AddJob(MakeJob(Blocks(20, {n}), /*reduces=*/3));
  // Slow-start 0.05 of 20 maps: no reduce until one map has finished.
  EXPECT_THAT(host.Heartbeat(n), ElementsAre(Map(j, 0, n), Map(j, 1, n)));
  host.FinishMap(j, 0);
  // Three free reduce slots, but one reduce attempt per heartbeat.
  EXPECT_THAT(host.Heartbeat(n), ElementsAre(Map(j, 2, n), Reduce(j, 0, n)));
  EXPECT_THAT(host.Heartbeat(n), ElementsAre(Reduce(j, 1, n)));
}

TEST(CapacityPolicyTest, ReducesGoToTheEmptierQueue) {
  TestHost host(MakePolicy("capacity", {{"queues", std::string("a:50,b:50")}}));
  NodeId n = host.AddNode(0, 0, /*reduce_slots=*/4);
  Job ja = In(MakeJob({}, 3), "a"), jb = In(MakeJob({}, 3), "b");
  JobId a = host.AddJob(ja), b = host.AddJob(jb);                // no maps: past slow-start
  EXPECT_THAT(host.Heartbeat(n), ElementsAre(Reduce(a, 0, n)));  // tie: a is listed first
  EXPECT_THAT(host.Heartbeat(n), ElementsAre(Reduce(b, 0, n)));  // b at 0/2 < a at 1/2
}

TEST(CapacityPolicyTest, JobsAreFiledByPoolWithAFallback) {
  TestHost host(MakePolicy("capacity", {{"queues", std::string("prod:60,default:40")}}));
  host.AddNode(0);
  JobId prod = host.AddJob(In(MakeJob({}), "prod"));
  JobId other = host.AddJob(In(MakeJob({}), "nightly"));
  EXPECT_EQ(Capacity(host).queue_of(prod), 0);
  EXPECT_EQ(Capacity(host).queue_of(other), 1);  // unknown pool: "default"
  TestHost no_default(MakePolicy("capacity", {{"queues", std::string("prod:60,dev:40")}}));
  JobId j = no_default.AddJob(MakeJob({}));
  EXPECT_EQ(Capacity(no_default).queue_of(j), 0);  // no "default": the first queue
}

TEST(CapacityPolicyTest, QueuesParseWithOptionalMaximum) {
  auto queues = ParseCapacityQueues(" prod:70:90 , adhoc:30 ");
  ASSERT_TRUE(queues.ok()) << queues.status().ToString();
  ASSERT_EQ(queues->size(), 2u);
  EXPECT_EQ((*queues)[0].name, "prod");
  EXPECT_EQ((*queues)[0].capacity_percent, 70);
  EXPECT_EQ((*queues)[0].max_capacity_percent, 90);
  EXPECT_EQ((*queues)[1].max_capacity_percent, -1);
  EXPECT_TRUE(ParseCapacityQueues("a:33.3,b:33.3,c:33.4").ok());  // floor(99.999…) forgiven
}

TEST(CapacityPolicyTest, BadParametersAreRejected) {
  auto message = [](const SchedulerParams& params) {
    auto made = MakeScheduler("capacity", params, {});
    EXPECT_FALSE(made.ok());
    return made.ok() ? std::string() : made.status().message();
  };
  EXPECT_THAT(message({{"queues", std::string("a:50,b:40")}}),
              HasSubstr("queue capacities must sum to 100, got 90.0"));
  EXPECT_THAT(message({{"queues", std::string("a:50:40,b:50")}}),
              HasSubstr("queue 'a': max_capacity must be -1 or in [capacity, 100]"));
  EXPECT_THAT(message({{"queues", std::string("a:100,a:0")}}), HasSubstr("duplicate name"));
  EXPECT_THAT(message({{"queues", std::string("a")}}),
              HasSubstr("expected name:capacity[:max_capacity]"));
  EXPECT_THAT(message({{"queues", std::string("a:x")}}), HasSubstr("capacity is not a number"));
  EXPECT_THAT(message({{"minimum_user_limit_percent", int64_t{0}}}),
              HasSubstr("minimum_user_limit_percent must be in [1, 100]"));
  EXPECT_THAT(message({{"user_limit_factor", 0.0}}), HasSubstr("user_limit_factor must be > 0"));
  EXPECT_THAT(message({{"maximum_tasks_after_offswitch", int64_t{-1}}}),
              HasSubstr("maximum_tasks_after_offswitch must be >= 0"));
  EXPECT_THAT(message({{"locality_wait_factor", -2.0}}),
              HasSubstr("locality_wait_factor must be -1 (auto) or >= 0"));
  EXPECT_TRUE(CapacityPolicy::Create(CapacityOptions{}).ok());
}

// ---- A long random event stream, to pin the decisions down. ----

// The cluster and workload of a random stream.
struct StreamShape {
  int nodes = 16;       // in 3 datacenters, 0–3 map and 0–2 reduce slots each
  int arrive_pct = 12;  // chance of an arrival per step, in %
  int users = 4;
};

// Heartbeats, arrivals, finishes, failures, node losses and returns drawn
// from `seed` (raw mt19937_64 draws, so the stream is the same with every
// standard library). Returns a digest (FNV-1a) of every launch in order and
// of every active job's missed opportunities after each heartbeat, and
// counts the launches in `*launches`.
uint64_t RunRandomStream(const SchedulerParams& params, const StreamShape& shape, uint64_t seed,
                         int steps, int64_t* launches) {
  std::mt19937_64 rng(seed);
  auto draw = [&](uint64_t n) { return static_cast<int>(rng() % n); };
  TestHost host(MakePolicy("capacity", params));
  std::vector<NodeId> nodes;
  for (int i = 0; i < shape.nodes; ++i) {
    const int dc = draw(3), map_slots = draw(4), reduce_slots = draw(3);
    nodes.push_back(host.AddNode(dc, map_slots, reduce_slots));
  }
  auto any_node = [&] { return nodes[static_cast<size_t>(draw(nodes.size()))]; };
  uint64_t digest = 14695981039346656037ull;
  auto mix = [&](int64_t v) {
    for (int b = 0; b < 8; ++b) {
      digest = (digest ^ ((static_cast<uint64_t>(v) >> (8 * b)) & 0xff)) * 1099511628211ull;
    }
  };
  const char* pools[] = {"a", "b", "c", "default", "", "elsewhere"};
  const double slowstarts[] = {0, 0.05, 0.5, 1, 0.2};
  *launches = 0;
  for (int step = 0; step < steps; ++step) {
    host.set_now(host.now() + draw(50));
    const int action = draw(100);
    if (action < 40) {
      for (const test::Launch& l : host.Heartbeat(any_node())) {
        mix(l.job), mix(l.index), mix(l.is_map), mix(l.node);
        ++*launches;
      }
      for (JobId id : host.state().active_jobs()) mix(Capacity(host).scheduling_opportunities(id));
    } else if (action < 40 + shape.arrive_pct) {
      std::vector<std::vector<NodeId>> replicas(static_cast<size_t>(draw(12)));
      for (auto& r : replicas) {
        for (int k = draw(4); k > 0; --k) r.push_back(any_node());
      }
      // Submit times tie and go back in time, so the order's key matters.
      const int reduces = draw(4), priority = draw(5) - 2, age = draw(3) * 20;
      const int pool = draw(std::size(pools)), user = draw(static_cast<uint64_t>(shape.users));
      Job j = In(MakeJob(replicas, reduces, priority, host.now() - age), pools[pool],
                 "u" + std::to_string(user));
      j.slowstart = slowstarts[draw(std::size(slowstarts))];
      host.AddJob(std::move(j));
    } else if (action < 90) {
      std::vector<std::tuple<JobId, int32_t, bool>> running;
      for (JobId id : host.state().active_jobs()) {
        for (const MapTask& m : host.job(id).maps) {
          if (m.state == TaskState::kRunning) running.emplace_back(id, m.index, true);
        }
        for (const ReduceTask& r : host.job(id).reduces) {
          if (r.state == TaskState::kRunning) running.emplace_back(id, r.index, false);
        }
      }
      if (running.empty()) continue;
      const auto [job, index, is_map] = running[static_cast<size_t>(draw(running.size()))];
      if (draw(5) == 0) {
        is_map ? host.FailMap(job, index) : host.FailReduce(job, index);
      } else {
        is_map ? host.FinishMap(job, index) : host.FinishReduce(job, index);
      }
    } else if (action < 94) {
      const NodeId n = any_node();
      host.state().node(n).live ? host.LoseNode(n) : host.ReturnNode(n);
    } else if (action == 94 && draw(20) == 0 && !host.state().active_jobs().empty()) {
      // A burst of (empty) changes: more than the state's change log keeps.
      for (int k = 0; k < 140000; ++k) host.state().mutable_job(host.state().active_jobs()[0]);
    }
  }
  EXPECT_EQ(host.violations(), 0);
  return digest;
}

// The decisions of the policy as first written (one full recount and sort
// per heartbeat), recorded before its bookkeeping became incremental: any
// change here is a change of behaviour, not of speed.
TEST(CapacityPolicyTest, ALongRandomStreamGivesTheRecordedDecisions) {
  struct Case {
    SchedulerParams params;
    StreamShape shape;
    uint64_t digest;
    int64_t launches;
  };
  const Case cases[] = {
      {{{"queues", std::string("a:50:80,b:30,c:20")}, {"minimum_user_limit_percent", int64_t{25}}},
       {16, 12, 4},
       10851017177254888702ull,
       2489},
      {{{"queues", std::string("a:40,b:40:100,default:20:30")},
        {"minimum_user_limit_percent", int64_t{33}},
        {"user_limit_factor", 2.5},
        {"supports_priority", true},
        {"maximum_tasks_after_offswitch", int64_t{3}}},
       {6, 5, 5},
       15373582884501661213ull,
       2165},
      {{{"queues", std::string("c:10,a:90")},
        {"minimum_user_limit_percent", int64_t{50}},
        {"user_limit_factor", 1.5},
        {"maximum_tasks_per_heartbeat", int64_t{3}},
        {"locality_wait_factor", 0.5}},
       {30, 20, 3},
       11120207265654348827ull,
       2407},
      {{{"queues", std::string("a:0,b:100")},
        {"minimum_user_limit_percent", int64_t{10}},
        {"user_limit_factor", 10.0},
        {"locality_wait_factor", 0.0},
        {"maximum_tasks_after_offswitch", int64_t{1}}},
       {10, 8, 6},
       17273420320861052454ull,
       2126},
      {{}, {12, 10, 2}, 11510250020274283851ull, 2232},
  };
  for (size_t c = 0; c < std::size(cases); ++c) {
    int64_t launches = 0;
    const uint64_t digest =
        RunRandomStream(cases[c].params, cases[c].shape, 1000 + c, 8000, &launches);
    EXPECT_EQ(digest, cases[c].digest) << "case " << c;
    EXPECT_EQ(launches, cases[c].launches) << "case " << c;
  }
}

// topology = "blind" (Hadoop 0.20.2 in JoSS, one rack): every map is
// node- or rack-local, so the off-switch gate never holds a map back and
// no map ends the heartbeat's loop; the first map anywhere after the node.
TEST(CapacityPolicyTest, BlindTopologyNeverGatesOffSwitch) {
  for (const bool blind : {false, true}) {
    SCOPED_TRACE(blind ? "blind" : "rack-as-datacenter");
    TestHost host(blind ? MakePolicy("capacity", {{"topology", std::string("blind")}})
                        : MakePolicy("capacity"));
    NodeId a = host.AddNode(0, /*map_slots=*/3, /*reduce_slots=*/0);
    NodeId b = host.AddNode(0, 1, 0), c = host.AddNode(1, 1, 0), d = host.AddNode(1, 1, 0);
    JobId j = host.AddJob(MakeJob({{c}, {b}, {d}, {c}, {d}, {c}}, /*reduces=*/0));
    if (blind) {
      EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a), Map(j, 1, a), Map(j, 2, a)));
    } else {
      // b's map is datacenter-local; then the gate (min(5, 4) × 3/4 = 3
      // missed opportunities needed, 1 so far) holds the others back.
      EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 1, a)));
    }
  }
}

}  // namespace
}  // namespace mr::sched
