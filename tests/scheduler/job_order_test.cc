// Tests for scheduler/job_order.h: FIFO order, the Fair Scheduler's share
// computation and its FairShareComparator order (baselines.md §3.1–3.3),
// one decision at a time, each with why.
#include "scheduler/job_order.h"

#include <algorithm>
#include <map>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/scheduler/test_host.h"

namespace mr::sched {
namespace {

using test::MakeJob;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A cluster of 4 nodes with 50 map and 10 reduce slots each (200 / 40),
// for building jobs and running tasks on them.
class OrderTest : public ::testing::Test {
 protected:
  OrderTest() {
    for (int i = 0; i < 4; ++i) state.AddNode("n" + std::to_string(i), 0, -1, 50, 10);
  }
  // A job of `maps` maps on n0 in `pool`.
  JobId Add(const std::string& pool, int maps = 10, int priority = 0, TimeMs submit_ms = 0) {
    Job job = MakeJob(std::vector<std::vector<NodeId>>(static_cast<size_t>(maps), {0}), 1, priority,
                      submit_ms);
    job.pool = pool;
    return state.AddJob(std::move(job));
  }
  // Runs `count` more maps of `job` on n0.
  void Run(JobId job, int count) {
    for (const MapTask& m : state.job(job).maps) {
      if (count == 0) return;
      if (m.state == TaskState::kPending) state.LaunchMap(job, m.index, 0), --count;
    }
  }
  std::vector<JobId> Sorted(const JobOrder& order, bool maps = true) {
    std::vector<JobId> jobs = state.active_jobs();
    std::reverse(jobs.begin(), jobs.end());  // the input order must not matter
    order.Sort(state, maps, &jobs);
    return jobs;
  }

  ClusterState state;
};

TEST_F(OrderTest, FifoIsPriorityThenSubmitTimeThenId) {
  JobId j0 = Add("p", 1, /*priority=*/0, /*submit_ms=*/100);
  JobId j1 = Add("p", 1, /*priority=*/1, /*submit_ms=*/200);
  JobId j2 = Add("p", 1, 0, 50);
  JobId j3 = Add("p", 1, 0, 50);
  // Higher priority first, then earlier submission, then the lower id:
  // exactly FifoPolicy's queue.
  EXPECT_THAT(Sorted(FifoOrder()), ElementsAre(j1, j2, j3, j0));
}

// FifoOrder caches its last answer; arrivals, completions, subsets and
// repeated ids must still give exactly a fresh sort's answer.
TEST_F(OrderTest, FifoCacheMatchesAFreshSortAcrossChanges) {
  const FifoOrder cached;
  auto fresh = [&](std::vector<JobId> jobs) {
    std::sort(jobs.begin(), jobs.end(),
              [&](JobId a, JobId b) { return FifoOrder::Before(state.job(a), state.job(b)); });
    return jobs;
  };
  auto check = [&](std::vector<JobId> jobs) {
    std::vector<JobId> got = jobs;
    cached.Sort(state, true, &got);
    EXPECT_EQ(got, fresh(jobs));
  };
  for (int i = 0; i < 12; ++i) Add("p", 1, /*priority=*/i % 3 - 1, /*submit_ms=*/(i * 7) % 5);
  check(state.active_jobs());
  check(state.active_jobs());  // the cached answer
  state.FinishJob(3);
  state.FinishJob(8);
  Add("p", 1, 1, 0);
  Add("p", 1, -1, 100);
  check(state.active_jobs());  // two left, two arrived: merged
  std::vector<JobId> reversed = state.active_jobs();
  std::reverse(reversed.begin(), reversed.end());
  check(reversed);                     // same set, another input order
  check({5, 1, 13});                   // a small subset
  check({5, 5, 1, 2, 4, 6, 7, 9, 10});  // a repeated id
  check(state.active_jobs());
}

// FairOrder caches each pool's job order and re-places only the jobs whose
// key changed; across random launches, finishes, arrivals, completions,
// priority changes, Updates, subsets and repeated ids it must give exactly
// the answer of a plain full sort written from baselines.md §3.3.
TEST_F(OrderTest, FairCacheMatchesAFreshSortAcrossChanges) {
  for (int i = 0; i < 12; ++i) state.AddNode("r" + std::to_string(i), 0, -1, 50, 40);
  auto free_node = [&](bool maps) {
    for (const Node& n : state.nodes()) {
      if ((maps ? n.free_map_slots() : n.free_reduce_slots()) > 0) return n.id;
    }
    return kNoNode;
  };
  const std::vector<PoolSpec> pools =
      ParsePools("prod:2:30:3, adhoc:1:0:0:fifo, small:0.5:4:1, spare:1:1000:1000").value();
  FairOrder cached(pools);
  std::map<JobId, std::pair<int, int>> seen_demand;  // at the last Update
  std::map<JobId, std::pair<double, double>> read_shares;
  auto demand = [&](JobId id, bool maps) {
    auto it = seen_demand.find(id);
    if (it != seen_demand.end()) return maps ? it->second.first : it->second.second;
    return JobDemand(state.job(id), maps);
  };
  auto fresh = [&](std::vector<JobId> jobs, bool maps) {
    struct Pool {
      std::vector<JobId> jobs;
      int running = 0, demand = 0;
      PoolSpec spec;
    };
    std::map<std::string, Pool> by_name;
    for (JobId id : jobs) {
      Pool& p = by_name[FairOrder::PoolName(state.job(id))];
      p.jobs.push_back(id);
      p.running += maps ? state.job(id).running_maps : state.job(id).running_reduces;
      p.demand += demand(id, maps);
    }
    std::vector<Pool*> order;
    for (auto& [name, p] : by_name) {
      for (const PoolSpec& spec : pools) {
        if (spec.name == name) p.spec = spec;
      }
      order.push_back(&p);
    }
    auto key = [&](const Pool* p) {
      const int min_share = std::min(maps ? p->spec.min_maps : p->spec.min_reduces, p->demand);
      const bool needy = p->running < min_share;
      return std::make_pair(
          needy ? 0 : 1, needy ? static_cast<double>(p->running) / std::max(min_share, 1)
                               : p->running / p->spec.weight);
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](const Pool* a, const Pool* b) { return key(a) < key(b); });
    std::vector<JobId> out;
    for (Pool* p : order) {
      std::sort(p->jobs.begin(), p->jobs.end(), [&](JobId a, JobId b) {
        const Job& x = state.job(a);
        const Job& y = state.job(b);
        if (p->spec.fifo) return FifoOrder::Before(x, y);
        const double rx = (maps ? x.running_maps : x.running_reduces) / PriorityWeight(x.priority);
        const double ry = (maps ? y.running_maps : y.running_reduces) / PriorityWeight(y.priority);
        if (rx != ry) return rx < ry;
        if (x.submit_ms != y.submit_ms) return x.submit_ms < y.submit_ms;
        return a < b;
      });
      out.insert(out.end(), p->jobs.begin(), p->jobs.end());
    }
    return out;
  };
  int checks = 0;
  auto check = [&](std::vector<JobId> jobs, bool maps) {
    std::vector<JobId> got = jobs;
    cached.Sort(state, maps, &got);
    ASSERT_EQ(got, fresh(jobs, maps)) << "check " << checks;
    ++checks;
  };
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  const std::vector<std::string> names = {"prod", "adhoc", "small", "spare", "", "other"};
  auto arrive = [&] {
    Job job = MakeJob(std::vector<std::vector<NodeId>>(static_cast<size_t>(1 + pick(12)), {0}),
                      pick(3), pick(7) - 3, pick(50));
    job.slowstart = pick(2) == 0 ? 0.0 : 0.5;
    job.pool = names[static_cast<size_t>(pick(static_cast<int>(names.size())))];
    state.AddJob(std::move(job));
  };
  for (int i = 0; i < 60; ++i) arrive();
  for (int step = 0; step < 3000; ++step) {
    const std::vector<JobId>& active = state.active_jobs();
    const int op = pick(100);
    if (active.empty() || op < 3) {
      arrive();
    } else {
      const JobId id = active[static_cast<size_t>(pick(static_cast<int>(active.size())))];
      const Job& job = state.job(id);
      if (op < 5) {
        state.FinishJob(id);
      } else if (op < 7) {
        state.mutable_job(id).priority = pick(5) - 2;
      } else if (op < 8) {
        // Shares are computed on first read from what Update saw: read
        // them from `cached` only steps later, compare with an order that
        // read them at once.
        for (const auto& [id, share] : read_shares) {
          EXPECT_EQ(cached.JobFairShare(id, true), share.first) << "job " << id;
          EXPECT_EQ(cached.JobFairShare(id, false), share.second) << "job " << id;
        }
        cached.Update(state, step);
        FairOrder eager(pools);
        eager.Update(state, step);
        read_shares.clear();
        for (JobId a : state.active_jobs()) {
          read_shares[a] = {eager.JobFairShare(a, true), eager.JobFairShare(a, false)};
        }
        seen_demand.clear();
        for (JobId a : state.active_jobs()) {
          seen_demand[a] = {JobDemand(state.job(a), true), JobDemand(state.job(a), false)};
        }
      } else if (op < 50) {
        for (const MapTask& m : job.maps) {
          if (m.state == TaskState::kPending && free_node(true) != kNoNode) {
            state.LaunchMap(id, m.index, free_node(true));
            break;
          }
        }
      } else if (op < 75) {
        for (const MapTask& m : job.maps) {
          if (m.state == TaskState::kRunning) {
            state.FinishMap(id, m.index, 10);
            break;
          }
        }
      } else if (op < 88) {
        for (const ReduceTask& r : job.reduces) {
          if (r.state == TaskState::kPending && job.reduces_may_start() &&
              free_node(false) != kNoNode) {
            state.LaunchReduce(id, r.index, free_node(false));
            break;
          }
        }
      } else {
        for (const ReduceTask& r : job.reduces) {
          if (r.state == TaskState::kRunning) {
            state.FinishReduce(id, r.index);
            break;
          }
        }
      }
    }
    const bool maps = pick(4) != 0;
    check(state.active_jobs(), maps);
    if (step % 97 == 0) {
      std::vector<JobId> reversed = state.active_jobs();
      std::reverse(reversed.begin(), reversed.end());
      check(reversed, maps);  // same set, another input order
    }
    if (step % 89 == 0 && state.active_jobs().size() > 3) {
      std::vector<JobId> few(state.active_jobs().begin(), state.active_jobs().begin() + 3);
      check(few, maps);  // a small subset
      few.push_back(few[0]);
      check(few, maps);  // a repeated id
    }
    if (HasFatalFailure()) return;
  }
}

TEST(FairSharesTest, WeightsSplitTheSlotsProportionally) {
  // 2:1 weights, enough demand: 12 slots split 8 / 4.
  EXPECT_THAT(ComputeFairShares({{2, 0, 100}, {1, 0, 100}}, 12),
              ElementsAre(DoubleNear(8, 1e-3), DoubleNear(4, 1e-3)));
}

TEST(FairSharesTest, DemandCapsAShareAndTheRestGoesToOthers) {
  // The first wants only 2 of its equal half: the other gets the 8 left.
  EXPECT_THAT(ComputeFairShares({{1, 0, 2}, {1, 0, 100}}, 10),
              ElementsAre(DoubleNear(2, 1e-3), DoubleNear(8, 1e-3)));
}

TEST(FairSharesTest, MinShareIsAFloor) {
  // Equal weights would give 5 / 5, but the second is guaranteed 8.
  EXPECT_THAT(ComputeFairShares({{1, 0, 100}, {1, 8, 100}}, 10),
              ElementsAre(DoubleNear(2, 1e-3), DoubleNear(8, 1e-3)));
  // A min share above demand is capped by demand.
  EXPECT_THAT(ComputeFairShares({{1, 0, 100}, {1, 8, 3}}, 10),
              ElementsAre(DoubleNear(7, 1e-3), DoubleNear(3, 1e-3)));
}

TEST(FairSharesTest, TotalDemandBelowTheSlotsIsMetInFull) {
  // Σ share = min(Σ demand, slots) = 5: everyone gets its demand.
  EXPECT_THAT(ComputeFairShares({{1, 0, 2}, {4, 0, 3}}, 100),
              ElementsAre(DoubleNear(2, 1e-3), DoubleNear(3, 1e-3)));
}

TEST(FairSharesTest, TwentyFiveBisectionStepsAreCloseEnough) {
  // R needs doubling up to 2^6 = 64 before bisection; 25 halvings of 64
  // leave an error below 2e-6 per unit weight.
  std::vector<double> s = ComputeFairShares({{1, 0, 1000}, {3, 0, 1000}}, 200);
  EXPECT_NEAR(s[0], 50, 1e-4);
  EXPECT_NEAR(s[1], 150, 1e-4);
}

TEST_F(OrderTest, PoolBelowItsMinShareComesFirst) {
  FairOrder order(*ParsePools("prod:1:3:0"));
  JobId adhoc = Add("adhoc");
  JobId prod = Add("prod");
  Run(prod, 2);  // below its min share of 3
  // prod runs 2 and adhoc none, but prod is needy (2 < min(3, demand)).
  EXPECT_THAT(Sorted(order), ElementsAre(prod, adhoc));
  Run(prod, 1);
  // At its min share prod is no longer needy: 3 / 1 > 0 / 1.
  EXPECT_THAT(Sorted(order), ElementsAre(adhoc, prod));
}

TEST_F(OrderTest, NeedyPoolsByRunningOverMinShare) {
  FairOrder order(*ParsePools("a:1:10:0,b:1:4:0"));
  JobId a = Add("a", 20), b = Add("b", 20);
  Run(a, 3);  // 3 / 10 = 0.3
  Run(b, 2);  // 2 / 4 = 0.5
  // Both needy: the one furthest below its minimum first.
  EXPECT_THAT(Sorted(order), ElementsAre(a, b));
}

TEST_F(OrderTest, PoolsByRunningOverWeight) {
  FairOrder order(*ParsePools("heavy:3,light:1"));
  JobId heavy = Add("heavy", 20), light = Add("light", 20);
  Run(heavy, 5);  // 5 / 3 ≈ 1.67
  Run(light, 2);  // 2 / 1
  // Weight 3 lets heavy run 5 tasks and still be behind light's 2.
  EXPECT_THAT(Sorted(order), ElementsAre(heavy, light));
  Run(heavy, 1);  // 6 / 3 = 2: a tie, broken by pool name
  EXPECT_THAT(Sorted(order), ElementsAre(heavy, light));
  Run(heavy, 1);  // 7 / 3 > 2
  EXPECT_THAT(Sorted(order), ElementsAre(light, heavy));
}

TEST_F(OrderTest, EqualPoolsTieOnNameAndUnlistedPoolsAreDefault) {
  FairOrder order;
  JobId z = Add("zeta"), a = Add("alpha"), d = Add("");
  // No pool runs anything and all weigh 1: name order, "" being "default".
  EXPECT_THAT(Sorted(order), ElementsAre(a, d, z));
}

TEST_F(OrderTest, JobsInAPoolByRunningOverPriorityWeight) {
  FairOrder order;
  JobId normal = Add("p", 10, /*priority=*/0, /*submit_ms=*/0);
  JobId high = Add("p", 10, /*priority=*/1, /*submit_ms=*/10);
  Run(normal, 1);  // 1 / 1
  Run(high, 2);    // 2 / 2: a tie, broken by submit time
  EXPECT_THAT(Sorted(order), ElementsAre(normal, high));
  Run(normal, 1);  // 2 / 1 > 2 / 2: the HIGH job (weight 2) goes first
  EXPECT_THAT(Sorted(order), ElementsAre(high, normal));
}

TEST_F(OrderTest, FifoPoolKeepsFifoOrderInside) {
  FairOrder order(*ParsePools("batch:1:0:0:fifo"));
  JobId first = Add("batch", 10, 0, /*submit_ms=*/0);
  JobId second = Add("batch", 10, 0, /*submit_ms=*/10);
  Run(first, 3);
  // A FAIR pool would now prefer `second` (0 running); FIFO keeps `first`.
  EXPECT_THAT(Sorted(order), ElementsAre(first, second));
}

TEST_F(OrderTest, ReducesUseReduceCountsAndMinShares) {
  FairOrder order(*ParsePools("b:1:5:0,z:1:0:1"));
  JobId b = Add("b", 1), z = Add("z", 1);
  for (JobId j : {b, z}) {
    state.LaunchMap(j, 0, 0);
    state.FinishMap(j, 0, 10);  // past slow-start: reduce demand 1
  }
  // For reduces only z has a min share (min_reduces 1; b's 5 are maps), so
  // z is needy and goes before b despite the name order.
  EXPECT_THAT(Sorted(order, /*maps=*/false), ElementsAre(z, b));
}

TEST_F(OrderTest, UpdateComputesPoolThenJobShares) {
  FairOrder order(*ParsePools("prod:3:0:0,batch:1:0:0:fifo"));
  JobId p0 = Add("prod", 100), p1 = Add("prod", 100, /*priority=*/1);
  JobId b0 = Add("batch", 100);
  order.Update(state, 0);
  // Demand 300 for 200 map slots, split 3:1 between the pools.
  EXPECT_NEAR(order.PoolFairShare("prod", true), 150, 1e-3);
  EXPECT_NEAR(order.PoolFairShare("batch", true), 50, 1e-3);
  // Inside prod, 2^priority weights: 1:2 of 150.
  EXPECT_NEAR(order.JobFairShare(p0, true), 50, 1e-3);
  EXPECT_NEAR(order.JobFairShare(p1, true), 100, 1e-3);
  // A FIFO pool gives its jobs share 0.
  EXPECT_EQ(order.JobFairShare(b0, true), 0);
  // No reduce demand before slow-start: no reduce share.
  EXPECT_EQ(order.PoolFairShare("prod", false), 0);
}

TEST(PriorityWeightTest, HadoopFactors) {
  // VERY_HIGH 4, HIGH 2, NORMAL 1, LOW 0.5, VERY_LOW 0.25; clamped outside.
  EXPECT_EQ(PriorityWeight(2), 4);
  EXPECT_EQ(PriorityWeight(0), 1);
  EXPECT_EQ(PriorityWeight(-2), 0.25);
  EXPECT_EQ(PriorityWeight(7), 4);
}

TEST(ParsePoolsTest, FieldsAreOptionalAndSpacesIgnored) {
  auto pools = ParsePools(" prod : 2 : 10 : 5 , adhoc, batch:1:0:0:fifo");
  ASSERT_TRUE(pools.ok()) << pools.status().ToString();
  ASSERT_EQ(pools->size(), 3u);
  EXPECT_EQ((*pools)[0].name, "prod");
  EXPECT_EQ((*pools)[0].weight, 2);
  EXPECT_EQ((*pools)[0].min_maps, 10);
  EXPECT_EQ((*pools)[0].min_reduces, 5);
  EXPECT_EQ((*pools)[1].weight, 1);  // defaults
  EXPECT_FALSE((*pools)[1].fifo);
  EXPECT_TRUE((*pools)[2].fifo);
  EXPECT_TRUE(ParsePools("").ok());
}

TEST(ParsePoolsTest, BadEntriesAreRejectedByName) {
  EXPECT_THAT(ParsePools("a:0").status().message(), HasSubstr("'a:0': weight must be"));
  EXPECT_THAT(ParsePools("a:1:-1").status().message(), HasSubstr("min_maps must be"));
  EXPECT_THAT(ParsePools("a:1:0:x").status().message(), HasSubstr("min_reduces must be"));
  EXPECT_THAT(ParsePools("a,a").status().message(), HasSubstr("pool named twice"));
  EXPECT_THAT(ParsePools("a,,b").status().message(), HasSubstr("empty pool name"));
  EXPECT_THAT(ParsePools("a:1:0:0:lifo").status().message(), HasSubstr("mode must be"));
  EXPECT_TRUE(ParsePools("a:1.5").ok());
}

}  // namespace
}  // namespace mr::sched
