// The order among replicas in other datacenters and the per-datacenter
// estimate it comes from (dfs/link_rates.h). Pure: no sockets, no clock.
#include "dfs/link_rates.h"

#include <gtest/gtest.h>

#include <deque>
#include <thread>

namespace mr::dfs {
namespace {

// Replicas named "<node>@<datacenter>".
class Replicas {
 public:
  Replicas(std::initializer_list<const char*> specs) {
    for (const char* s : specs) {
      const std::string spec = s;
      const size_t at = spec.find('@');
      pb::ReplicaLocation r;
      r.set_node_id(spec.substr(0, at));
      r.set_datacenter(spec.substr(at + 1));
      all_.push_back(r);
    }
  }
  // The master's order, as ReadBlock hands it over.
  std::vector<const pb::ReplicaLocation*> Order() const {
    std::vector<const pb::ReplicaLocation*> out;
    for (const auto& r : all_) out.push_back(&r);
    return out;
  }
  static std::vector<std::string> Nodes(const std::vector<const pb::ReplicaLocation*>& order) {
    std::vector<std::string> out;
    for (const auto* r : order) out.push_back(r->node_id());
    return out;
  }

 private:
  std::deque<pb::ReplicaLocation> all_;  // stable addresses
};

std::vector<std::string> Ordered(std::string_view reader_dc, const LinkRateEstimates& rates,
                                 const Replicas& replicas) {
  auto order = replicas.Order();
  OrderByLinkRate(reader_dc, rates, &order);
  return Replicas::Nodes(order);
}

using V = std::vector<std::string>;

TEST(OrderByLinkRate, TheFasterMeasuredDatacenterComesFirst) {
  // The master listed dc3 first (its rotation); dc2's link is faster.
  Replicas r{"w3@dc3", "w2@dc2"};
  EXPECT_EQ(Ordered("dc1", {{"dc2", 25e6}, {"dc3", 1.2e6}}, r), (V{"w2", "w3"}));
  EXPECT_EQ(Ordered("dc1", {{"dc2", 1e6}, {"dc3", 2e6}}, r), (V{"w3", "w2"}));
}

TEST(OrderByLinkRate, AnUnmeasuredDatacenterComesBeforeAMeasuredOne) {
  // Optimistic: dc2 was never read from, so it is tried (and measured)
  // before dc3, however fast dc3 was.
  Replicas r{"w3@dc3", "w2@dc2"};
  EXPECT_EQ(Ordered("dc1", {{"dc3", 1e9}}, r), (V{"w2", "w3"}));
}

TEST(OrderByLinkRate, WithoutEstimatesTheMastersOrderStays) {
  Replicas r{"w3@dc3", "w2@dc2", "w4@dc4"};
  EXPECT_EQ(Ordered("dc1", {}, r), (V{"w3", "w2", "w4"}));
}

TEST(OrderByLinkRate, ReplicasInTheReadersDatacenterNeverMove) {
  // Local node and same datacenter first, as the master listed them, even
  // with an estimate (there is never one for the own datacenter, but the
  // order must not depend on that).
  Replicas r{"w1@dc1", "w5@dc1", "w3@dc3", "w2@dc2"};
  EXPECT_EQ(Ordered("dc1", {{"dc1", 1.0}, {"dc2", 3e6}, {"dc3", 2e6}}, r),
            (V{"w1", "w5", "w2", "w3"}));
  // A same-datacenter replica between others (a reader the master did not
  // place) keeps its slot; only the others move around it.
  Replicas mixed{"w3@dc3", "w1@dc1", "w2@dc2"};
  EXPECT_EQ(Ordered("dc1", {{"dc2", 3e6}, {"dc3", 2e6}}, mixed), (V{"w2", "w1", "w3"}));
}

TEST(OrderByLinkRate, AReaderThatDoesNotKnowItsDatacenterKeepsTheMastersOrder) {
  Replicas r{"w3@dc3", "w2@dc2"};
  EXPECT_EQ(Ordered("", {{"dc2", 3e6}, {"dc3", 2e6}}, r), (V{"w3", "w2"}));
}

TEST(OrderByLinkRate, ReplicasOfOneDatacenterKeepTheirOrder) {
  // Stable: the master's order inside dc3 (and among unmeasured dc4, dc5).
  Replicas r{"w7@dc3", "w6@dc3", "w9@dc5", "w8@dc4", "w2@dc2"};
  EXPECT_EQ(Ordered("dc1", {{"dc2", 1e6}, {"dc3", 5e6}}, r), (V{"w9", "w8", "w7", "w6", "w2"}));
}

TEST(LinkRates, SmallReadsCountButAreNoSample) {
  LinkRates rates;
  pb::ReplicaLocation dc2;
  dc2.set_datacenter("dc2");
  rates.RecordRead("dc1", dc2, kMinRateSampleBytes - 1, 0.001);
  EXPECT_TRUE(rates.Estimates().empty());
  auto stats = rates.Stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].datacenter, "dc2");
  EXPECT_EQ(stats[0].reads, 1);
  EXPECT_EQ(stats[0].bytes, kMinRateSampleBytes - 1);
  EXPECT_EQ(stats[0].samples, 0);
  // Exactly the threshold is a sample; zero seconds is not (no rate).
  rates.RecordRead("dc1", dc2, kMinRateSampleBytes, 0.0);
  EXPECT_TRUE(rates.Estimates().empty());
  rates.RecordRead("dc1", dc2, kMinRateSampleBytes, 0.5);
  EXPECT_DOUBLE_EQ(rates.Estimates().at("dc2"), kMinRateSampleBytes / 0.5);
}

TEST(LinkRates, SameDatacenterAndUnknownReadersAreNotRecorded) {
  LinkRates rates;
  pb::ReplicaLocation dc1;
  dc1.set_datacenter("dc1");
  rates.RecordRead("dc1", dc1, 1 << 20, 0.1);
  rates.RecordRead("", dc1, 1 << 20, 0.1);
  EXPECT_TRUE(rates.Stats().empty());
}

TEST(LinkRates, TheEstimateIsTheMedianOfTheLastFive) {
  LinkRates rates;
  pb::ReplicaLocation dc2;
  dc2.set_datacenter("dc2");
  const int64_t mib = 1 << 20;
  // 10 MB/s three times, then one read that took 100 times as long: the
  // median ignores the outlier (an EWMA would not).
  for (int i = 0; i < 3; ++i) rates.RecordRead("dc1", dc2, 10 * mib, 1.0);
  rates.RecordRead("dc1", dc2, 10 * mib, 100.0);
  EXPECT_DOUBLE_EQ(rates.Estimates().at("dc2"), 10.0 * mib);
  // Two samples: the mean of the two.
  LinkRates two;
  two.RecordRead("dc1", dc2, 2 * mib, 1.0);
  two.RecordRead("dc1", dc2, 4 * mib, 1.0);
  EXPECT_DOUBLE_EQ(two.Estimates().at("dc2"), 3.0 * mib);
  auto stats = rates.Stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].reads, 4);
  EXPECT_EQ(stats[0].samples, 4);
  EXPECT_EQ(stats[0].bytes, 40 * mib);
}

TEST(LinkRates, ARealChangeWinsAfterThreeReads) {
  LinkRates rates;
  pb::ReplicaLocation dc2;
  dc2.set_datacenter("dc2");
  const int64_t mib = 1 << 20;
  for (int i = 0; i < 5; ++i) rates.RecordRead("dc1", dc2, 10 * mib, 1.0);
  // The link slows to 1 MB/s for good: two reads do not move the median,
  // the third does (the window holds only the last five).
  for (int i = 0; i < 2; ++i) rates.RecordRead("dc1", dc2, mib, 1.0);
  EXPECT_DOUBLE_EQ(rates.Estimates().at("dc2"), 10.0 * mib);
  rates.RecordRead("dc1", dc2, mib, 1.0);
  EXPECT_DOUBLE_EQ(rates.Estimates().at("dc2"), 1.0 * mib);
}

// A `dfs cat` of 16 blocks, each with a replica in dc2 (25 MB/s to dc1)
// and one in dc3 (1.25 MB/s), listed by the master in alternating order:
// read each block from the first replica of the order, recording what the
// read would have taken. At most one block comes from dc3.
TEST(LinkRates, AMultiBlockReadLearnsWithinOneRun) {
  Replicas a{"w3@dc3", "w2@dc2"};
  Replicas b{"w2@dc2", "w3@dc3"};
  const std::map<std::string, double> link = {{"dc2", 25e6}, {"dc3", 1.25e6}};
  LinkRates rates;
  int from_dc3 = 0;
  for (int block = 0; block < 16; ++block) {
    auto order = (block % 2 == 0 ? a : b).Order();
    OrderByLinkRate("dc1", rates.Estimates(), &order);
    const pb::ReplicaLocation& chosen = *order.front();
    const int64_t bytes = 1 << 20;
    rates.RecordRead("dc1", chosen, bytes, bytes / link.at(chosen.datacenter()));
    if (chosen.datacenter() == "dc3") ++from_dc3;
  }
  EXPECT_EQ(from_dc3, 1);
}

TEST(LinkRates, ConcurrentReadersShareOneTable) {
  // Map tasks on their own threads record into the worker's table.
  LinkRates rates;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&rates, t] {
      pb::ReplicaLocation from;
      from.set_datacenter(t % 2 == 0 ? "dc2" : "dc3");
      for (int i = 0; i < 1000; ++i) {
        rates.RecordRead("dc1", from, kMinRateSampleBytes, 0.01);
        auto order_input = rates.Estimates();
        (void)order_input;
      }
    });
  }
  for (auto& t : threads) t.join();
  auto stats = rates.Stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].reads + stats[1].reads, 4000);
  EXPECT_DOUBLE_EQ(rates.Estimates().at("dc2"), kMinRateSampleBytes / 0.01);
}

}  // namespace
}  // namespace mr::dfs
