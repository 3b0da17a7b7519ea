// Tests for master/job_pages.h: what /jobs, /job/ID and the timeline show
// for hand-made records, and that nothing a user controls reaches the page
// unescaped.
#include "master/job_pages.h"

#include <gtest/gtest.h>

#include <string>

namespace mr::master {
namespace {

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A finished job submitted at t = 10 s with `maps` maps on w1/w2 (each
// 1 s long, two at a time per worker) and one reduce on w2.
pb::JobRecord MakeJob(int maps) {
  pb::JobRecord j;
  j.set_id(7);
  j.set_state("succeeded");
  j.set_scheduler("fair");
  j.set_submit_ms(10000);
  j.set_end_ms(10000 + 1000 * maps);
  j.mutable_spec()->set_job("grep");
  for (int i = 0; i < maps; ++i) {
    pb::MapTaskRecord* m = j.add_maps();
    m->set_index(i);
    m->set_node(i % 2 ? "w2" : "w1");
    m->set_locality("node");
    m->set_start_ms(10000 + 500 * i);
    m->set_end_ms(11000 + 500 * i);
    (*m->mutable_phase_ms())["read"] = 300;
  }
  pb::ReduceTaskRecord* r = j.add_reduces();
  r->set_node("w2");
  r->set_start_ms(10100);
  r->set_end_ms(10000 + 1000 * maps);
  return j;
}

TEST(JobPagesTest, OneRowAndOneBarPerTask) {
  const pb::JobRecord j = MakeJob(5);
  const std::string page = JobPage(j, "test");
  EXPECT_EQ(Count(page, "<tr class=\"task\">"), 6);
  EXPECT_EQ(Count(page, "<rect class=\"task\""), 6);  // the timeline is inline
  EXPECT_NE(page.find("<td class=\"n\">0.50</td><td class=\"n\">1.50</td>"), std::string::npos)
      << page;  // map 1: start and end in seconds since submission
  EXPECT_NE(page.find("read=300"), std::string::npos);
  const std::string svg = TimelineSvg(j);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find(">w1</text>"), std::string::npos);
  EXPECT_NE(svg.find(">w2</text>"), std::string::npos);
}

// A task still running (no end yet) or from before timestamps has no bar,
// but still a row.
TEST(JobPagesTest, TasksWithoutTimesHaveNoBar) {
  pb::JobRecord j = MakeJob(2);
  j.mutable_maps(0)->clear_start_ms();
  j.mutable_maps(0)->clear_end_ms();
  EXPECT_EQ(Count(TimelineSvg(j), "<rect class=\"task\""), 2);
  EXPECT_EQ(Count(JobPage(j, "test"), "<tr class=\"task\">"), 3);
}

// Job names, parameters, paths, errors and node names are escaped
// everywhere they appear.
TEST(JobPagesTest, EscapesWhatUsersControl) {
  pb::JobRecord j = MakeJob(1);
  const std::string evil = "<script>alert('x')</script>&";
  j.mutable_spec()->set_job(evil);
  (*j.mutable_spec()->mutable_params())["pattern"] = evil;
  j.mutable_spec()->add_inputs("/in/" + evil);
  j.mutable_spec()->set_output("/out/" + evil);
  j.set_error(evil);
  j.mutable_maps(0)->set_node(evil);
  pb::JobListReply list;
  *list.add_jobs() = j;
  for (const std::string& page : {JobPage(j, evil), JobsPage(list, evil), TimelineSvg(j)}) {
    EXPECT_EQ(page.find("<script"), std::string::npos) << page;
    EXPECT_NE(page.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;"), std::string::npos) << page;
  }
}

TEST(JobPagesTest, JobsPageSplitsRunningFromHistory) {
  pb::JobListReply list;
  *list.add_jobs() = MakeJob(1);
  pb::JobRecord running = MakeJob(1);
  running.set_id(8);
  running.set_state("running");
  running.set_end_ms(0);
  *list.add_jobs() = running;
  const std::string page = JobsPage(list, "test");
  EXPECT_NE(page.find("<h2>Running (1)</h2>"), std::string::npos);
  EXPECT_NE(page.find("<h2>History (1)</h2>"), std::string::npos);
  EXPECT_LT(page.find("/job/8"), page.find("<h2>History"));
  EXPECT_GT(page.find("/job/7"), page.find("<h2>History"));
  EXPECT_NE(page.find("<td>fair</td>"), std::string::npos);
}

}  // namespace
}  // namespace mr::master
