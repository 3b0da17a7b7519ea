// Tests for common/job_why.h on hand-made records: the critical path names
// the last map and the reduce that waited for it, time lost is split by
// cause, the slowest worker and link are named; a record without
// timestamps explains nothing.
#include "common/job_why.h"

#include <gtest/gtest.h>

#include <string>

namespace mr::master {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;  // submission, ms since the epoch

pb::MapTaskRecord* AddMap(pb::JobRecord& j, int index, const std::string& node, const std::string& locality,
                          int64_t start_s10, int64_t end_s10, int64_t read_ms) {
  pb::MapTaskRecord* m = j.add_maps();
  m->set_index(index);
  m->set_node(node);
  m->set_locality(locality);
  m->set_start_ms(kT0 + start_s10 * 100);
  m->set_end_ms(kT0 + end_s10 * 100);
  m->set_input_bytes(10'000'000);
  if (locality == "off_datacenter") m->mutable_input()->set_other_dc(10'000'000);
  (*m->mutable_phase_ms())["read"] = read_ms;
  return m;
}

// Three fast node-local maps on w1 and w2 (10 MB read in 1 s each), one on
// w3 reading from another datacenter at a tenth of the speed; one reduce on
// w1 that started early, waited for the slow map, then fetched 40 MB.
pb::JobRecord SlowJob() {
  pb::JobRecord j;
  j.set_id(3);
  j.set_state("succeeded");
  j.set_submit_ms(kT0);
  j.set_end_ms(kT0 + 12'300);
  AddMap(j, 0, "w1", "node", 2, 14, 1000);
  AddMap(j, 1, "w2", "node", 3, 15, 1000);
  AddMap(j, 2, "w1", "node", 15, 27, 1000);
  AddMap(j, 3, "w3", "off_datacenter", 5, 105, 10000);  // 0.5 s .. 10.5 s
  pb::ReduceTaskRecord* r = j.add_reduces();
  r->set_index(0);
  r->set_node("w4");
  r->set_start_ms(kT0 + 2'000);
  r->set_end_ms(kT0 + 12'000);
  r->mutable_shuffle()->set_local(30'000'000);
  r->mutable_shuffle()->set_other_dc(10'000'000);
  (*r->mutable_phase_ms())["fetch"] = 8'000;
  (*r->mutable_phase_ms())["reduce"] = 1'200;
  (*r->mutable_phase_ms())["write"] = 300;
  pb::AttemptRecord* failed = j.add_ended_attempts();
  failed->set_state("failed");
  failed->set_start_ms(kT0 + 200);
  failed->set_end_ms(kT0 + 2'200);
  pb::AttemptRecord* killed = j.add_ended_attempts();  // a race's loser: speculation, not a retry
  killed->set_state("killed");
  killed->set_start_ms(kT0 + 300);
  killed->set_end_ms(kT0 + 9'000);
  j.set_backups_launched(1);
  j.set_speculation_wasted_ms(8'700);
  return j;
}

TEST(JobWhyTest, NamesTheCriticalPath) {
  const WhyReport why = ExplainJob(SlowJob());
  ASSERT_EQ(why.critical_path.size(), 4u);
  EXPECT_EQ(why.critical_path[0], "the job took 12.3 s from submission; its first task started 0.2 s after submission");
  EXPECT_EQ(why.critical_path[1],
            "map 3 on w3 was the last map to end, at 10.5 s, after running 10.0 s (8.3x the median map's 1.2 s); "
            "it read 10.0 MB (off_datacenter) at 1.0 MB/s");
  EXPECT_EQ(why.critical_path[2],
            "reduce 0 on w4 ended last, at 12.0 s; it started at 2.0 s and waited 8.5 s for map 3's output, "
            "fetched 40.0 MB (10.0 MB from other datacenters) in 8.0 s at 5.0 MB/s, then reduced and wrote for 1.5 s");
  EXPECT_EQ(why.critical_path[3], "committing the output and ending the job took 0.3 s after the last task");
}

TEST(JobWhyTest, SplitsTheTimeLostByCause) {
  const WhyReport why = ExplainJob(SlowJob());
  ASSERT_EQ(why.time_lost.size(), 4u);
  EXPECT_EQ(why.time_lost[0], "retries: 1 failed or lost attempt(s) ran 2.0 s before their tasks ran again");
  EXPECT_EQ(why.time_lost[1], "straggler: map 3 on w3 ran 8.8 s longer than the median map");
  EXPECT_EQ(why.time_lost[2], "speculation: 1 backup(s), 0 won; attempts that lost their race ran 8.7 s");
  EXPECT_EQ(why.time_lost[3], "waiting for a slot: maps started 0.6 s after submission on average, the last 1.5 s");
}

TEST(JobWhyTest, NamesTheSlowestWorkerAndLink) {
  const WhyReport why = ExplainJob(SlowJob());
  ASSERT_EQ(why.slowest.size(), 3u);
  EXPECT_EQ(why.slowest[0],
            "slowest worker: w3, whose maps ran at 1.0 MB/s of input (median), 0.12x the median worker's 8.3 MB/s; "
            "their reads ran at 1.0 MB/s, 0.10x the median worker's 10.0 MB/s");
  EXPECT_EQ(why.slowest[1],
            "map reads by locality: node 10.0 MB/s (3 maps), off_datacenter 1.0 MB/s (1 maps); the slowest link is off_datacenter");
  EXPECT_EQ(why.slowest[2], "slowest shuffle: reduce 0 on w4 fetched 40.0 MB at 5.0 MB/s (10.0 MB from other datacenters)");
}

// A worker with a throttled CPU reads as fast as the others, and its maps
// take five times as long: ranked by the maps' whole run, it is the slowest,
// and its reads say the time did not go to reading. (Ranked by read rate, as
// before, the throttled w2 of a real run came out at 0.97x the median.)
TEST(JobWhyTest, ASlowCpuIsTheSlowestWorkerThoughItsReadsAreNot) {
  pb::JobRecord j;
  j.set_submit_ms(kT0);
  AddMap(j, 0, "w1", "node", 0, 10, 500);
  AddMap(j, 1, "w2", "node", 0, 50, 500);
  AddMap(j, 2, "w3", "node", 0, 10, 500);
  const WhyReport why = ExplainJob(j);
  ASSERT_FALSE(why.slowest.empty());
  EXPECT_EQ(why.slowest[0],
            "slowest worker: w2, whose maps ran at 2.0 MB/s of input (median), 0.20x the median worker's 10.0 MB/s; "
            "their reads ran at 20.0 MB/s, 1.00x the median worker's 20.0 MB/s");
}

// A job of evenly fast maps has no straggler, no retries, no speculation.
TEST(JobWhyTest, AnEvenJobLosesTimeOnlyWaiting) {
  pb::JobRecord j;
  j.set_submit_ms(kT0);
  j.set_end_ms(kT0 + 2'000);
  AddMap(j, 0, "w1", "node", 1, 11, 1000);
  AddMap(j, 1, "w2", "node", 1, 12, 1000);
  const WhyReport why = ExplainJob(j);
  ASSERT_EQ(why.time_lost.size(), 1u);
  EXPECT_EQ(why.time_lost[0].rfind("waiting for a slot:", 0), 0u);
  EXPECT_EQ(why.critical_path.size(), 3u);  // no reduce
}

TEST(JobWhyTest, ARecordWithoutTimestampsExplainsNothing) {
  pb::JobRecord j = SlowJob();
  for (auto& m : *j.mutable_maps()) m.clear_start_ms();
  for (auto& r : *j.mutable_reduces()) r.clear_start_ms();
  const WhyReport why = ExplainJob(j);
  EXPECT_TRUE(why.critical_path.empty());
  EXPECT_TRUE(why.time_lost.empty());
  EXPECT_TRUE(why.slowest.empty());
}

}  // namespace
}  // namespace mr::master
