// JobHistory's brief keys: what `job list` reads instead of every finished
// job's whole record. A real RocksDB in a temporary directory; an older
// history (records without briefs) is written with RocksDB itself, as the
// code before the briefs left it.
#include "master/job_history.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <cstdlib>
#include <filesystem>

namespace mr::master {
namespace {

namespace fs = std::filesystem;

// A finished job of `maps` map records, each with a counter and a place.
pb::JobRecord Finished(int64_t id, int maps) {
  pb::JobRecord r;
  r.set_id(id);
  r.set_state("succeeded");
  r.mutable_spec()->set_job("wordcount");
  r.set_maps_total(maps);
  for (int i = 0; i < maps; ++i) {
    pb::MapTaskRecord* m = r.add_maps();
    m->set_index(i);
    m->set_node("w1");
    m->mutable_input()->set_local(100);
    m->set_raw_output_bytes(50);
    pb::AttemptPlace* p = r.add_attempt_places();
    p->set_is_map(true), p->set_index(i), p->set_node("w1");
  }
  pb::Counter* c = r.add_counters();
  c->set_group("framework"), c->set_name("records"), c->set_value(7);
  r.add_ended_attempts()->set_state("killed");
  return r;
}

class JobHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/mr-job-history-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string dir_;
};

TEST_F(JobHistoryTest, AFinishedJobsBriefIsItsRecordWithoutTasksAttemptsOrCounters) {
  auto h = JobHistory::Open(dir_);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  pb::JobRecord running;
  running.set_id(2);
  running.set_state("running");
  ASSERT_TRUE((*h)->Put(running).ok());
  ASSERT_TRUE((*h)->Put(Finished(1, 3)).ok());
  const std::vector<pb::JobRecord> briefs = (*h)->Briefs();
  ASSERT_EQ(briefs.size(), 1u) << "a running job has no brief";
  EXPECT_EQ(briefs[0].id(), 1);
  EXPECT_EQ(briefs[0].maps_total(), 3);
  EXPECT_EQ(briefs[0].maps_size(), 0);
  EXPECT_EQ(briefs[0].attempt_places_size(), 0);
  EXPECT_EQ(briefs[0].counters_size(), 0);
  EXPECT_EQ(briefs[0].ended_attempts_size(), 0);
  auto whole = (*h)->Get(1);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->maps_size(), 3) << "the record itself keeps its tasks";
}

TEST_F(JobHistoryTest, AnOlderHistoryGetsItsBriefsWrittenOnceAtOpen) {
  {
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    pb::JobRecord old = Finished(1, 4);  // before the fp_raw field, too
    pb::JobRecord running;
    running.set_id(2);
    running.set_state("running");
    ASSERT_TRUE(db->Put({}, "job/0000000000000001", old.SerializeAsString()).ok());
    ASSERT_TRUE(db->Put({}, "job/0000000000000002", running.SerializeAsString()).ok());
  }
  auto h = JobHistory::Open(dir_);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  std::vector<pb::JobRecord> briefs = (*h)->Briefs();
  ASSERT_EQ(briefs.size(), 1u);
  EXPECT_EQ(briefs[0].id(), 1);
  EXPECT_EQ(briefs[0].maps_size(), 0);
  EXPECT_TRUE(briefs[0].has_fp_raw()) << "its FP summed from the tasks it had";
  h->reset();
  h = JobHistory::Open(dir_);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ((*h)->Briefs().size(), 1u);
}

}  // namespace
}  // namespace mr::master
