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

pb::AttemptRecord MakeAttempt(bool is_map, int index, int attempt, const std::string& node,
                              const std::string& state) {
  pb::AttemptRecord a;
  a.set_is_map(is_map);
  a.set_index(index);
  a.set_attempt(attempt);
  a.set_node(node);
  a.set_state(state);
  a.set_start_ms(12000);
  return a;
}

// A running job's page lists its running attempts (progress, rate, the
// backup marked) and its failed ones (node, error), each with its log's
// link; it reloads itself and has a kill form carrying the token.
TEST(JobPagesTest, ARunningJobShowsItsAttemptsAndAKillButton) {
  pb::JobRecord j = MakeJob(2);
  j.set_state("running");
  j.set_end_ms(0);
  pb::AttemptRecord* run = j.add_running_attempts();
  *run = MakeAttempt(true, 3, 0, "w1", "running");
  run->set_progress(0.42f);
  run->set_progress_rate(0.021);
  *j.add_running_attempts() = MakeAttempt(true, 3, 1, "w2", "running");
  j.mutable_running_attempts(1)->set_speculative(true);
  pb::AttemptRecord* failed = j.add_ended_attempts();
  *failed = MakeAttempt(false, 0, 0, "w<3>", "failed");
  failed->set_end_ms(14500);
  failed->set_error("exit status 1: <oops>");
  const std::string page = JobPage(j, "test", "tok123");
  EXPECT_NE(page.find("<h2>Running attempts (2)</h2>"), std::string::npos) << page;
  EXPECT_NE(page.find("<td>map</td><td class=\"n\">3</td><td class=\"n\">0</td><td>w1</td>"
                      "<td class=\"n\">42%</td><td class=\"n\">2.1%/s</td><td class=\"n\">2.00</td>"),
            std::string::npos) << page;
  EXPECT_NE(page.find("<td class=\"n\">1 (backup)</td><td>w2</td>"), std::string::npos);
  EXPECT_NE(page.find("<h2>Failed and killed attempts (1)</h2>"), std::string::npos);
  EXPECT_NE(page.find("<td>w&lt;3&gt;</td><td>failed</td>"), std::string::npos) << page;
  EXPECT_NE(page.find("<td class=\"n\">4.50</td><td class=\"bad\">exit status 1: &lt;oops&gt;</td>"),
            std::string::npos) << page;
  EXPECT_NE(page.find("<a href=\"/job/7/log?task=m3&amp;attempt=1\">log</a>"), std::string::npos);
  EXPECT_NE(page.find("<a href=\"/job/7/log?task=r0&amp;attempt=0\">log</a>"), std::string::npos);
  EXPECT_EQ(Count(page, "\">log</a>"), 2 + 1 + 3) << "each attempt and each finished task";
  EXPECT_NE(page.find("<meta http-equiv=\"refresh\""), std::string::npos);
  EXPECT_NE(page.find("<form class=\"kill\" method=\"post\" action=\"/job/7/kill\">"
                      "<input type=\"hidden\" name=\"token\" value=\"tok123\">"),
            std::string::npos) << page;
}

// An ended job's page neither reloads nor offers the kill button, and
// still lists its failed attempts.
TEST(JobPagesTest, AnEndedJobIsStill) {
  pb::JobRecord j = MakeJob(1);
  j.set_state("failed");
  *j.add_ended_attempts() = MakeAttempt(true, 0, 0, "w1", "failed");
  j.set_ended_attempts_dropped(5);
  const std::string page = JobPage(j, "test", "tok123");
  EXPECT_EQ(page.find("refresh"), std::string::npos);
  EXPECT_EQ(page.find("<form"), std::string::npos);
  EXPECT_EQ(page.find("Running attempts"), std::string::npos);
  EXPECT_NE(page.find("<h2>Failed and killed attempts (6)</h2>\n<p>the first 5 are not listed</p>"),
            std::string::npos) << page;
  pb::JobListReply list;
  *list.add_jobs() = j;
  EXPECT_EQ(JobsPage(list, "test").find("refresh"), std::string::npos);
  list.mutable_jobs(0)->set_state("running");
  EXPECT_NE(JobsPage(list, "test").find("<meta http-equiv=\"refresh\""), std::string::npos);
}

// A listed record has no tasks: /jobs shows the FP its summary keeps
// (before: 0.000 for every job).
TEST(JobPagesTest, TheJobsPageShowsTheSummarysFp) {
  pb::JobRecord j = MakeJob(1);
  j.clear_maps();
  j.clear_reduces();
  j.set_fp_raw(0.975);
  j.set_fp_wire(0.25);
  pb::JobListReply list;
  *list.add_jobs() = j;
  const std::string page = JobsPage(list, "test");
  EXPECT_NE(page.find("<td class=\"n\">0.975</td><td class=\"n\">0.250</td>"), std::string::npos) << page;
}

}  // namespace
}  // namespace mr::master
