// jobs/counters.h: CounterSet's caps and reserved group, and Hadoop
// Streaming's reporter lines as Hadoop's PipeMapRed reads them.
#include "jobs/counters.h"

#include <gtest/gtest.h>

namespace mr::jobs {
namespace {

int64_t Value(const CounterSet& c, const std::string& group, const std::string& name) {
  for (const Counter& v : c.Values()) {
    if (v.group == group && v.name == name) return v.value;
  }
  return -999;
}

TEST(CounterSetTest, SumsPerGroupAndNameAndKeepsTheLastStatus) {
  CounterSet c;
  c.Increment("g", "a", 2);
  c.Increment("g", "a", -5);
  c.Increment("h", "a", 1);
  c.AddFramework(kCpuMilliseconds, 7);
  c.SetStatus("first");
  c.SetStatus("second");
  EXPECT_EQ(Value(c, "g", "a"), -3);
  EXPECT_EQ(Value(c, "h", "a"), 1);
  EXPECT_EQ(Value(c, kFrameworkGroup, kCpuMilliseconds), 7);
  EXPECT_EQ(c.status(), "second");
  ASSERT_EQ(c.Values().size(), 3u);
  EXPECT_EQ(c.Values()[0].group, "framework");  // sorted by group, then name
}

TEST(CounterSetTest, UserCountersAreCappedAndTheFrameworkGroupIsReserved) {
  CounterSet c;
  c.Increment(kFrameworkGroup, kMapInputRecords, 5);  // dropped: not the user's
  c.Increment("", "x", 1);
  for (size_t i = 0; i < kMaxUserCounters + 10; ++i) c.Increment("g", "n" + std::to_string(i), 1);
  c.Increment("g", "n0", 1);  // an existing one still counts
  EXPECT_EQ(c.Values().size(), kMaxUserCounters);
  EXPECT_EQ(c.dropped(), 10);
  EXPECT_EQ(Value(c, "g", "n0"), 2);
  c.Increment(std::string(300, 'g'), std::string(300, 'n'), 1);  // cut, and over the cap
  EXPECT_EQ(c.dropped(), 11);
  c.SetStatus(std::string(2000, 's'));
  EXPECT_EQ(c.status().size(), kMaxStatusBytes);
}

TEST(ReporterLineTest, CountersAndStatusAreParsedMalformedLinesSkipped) {
  CounterSet c;
  EXPECT_TRUE(ParseReporterLine("reporter:counter:Quality,Empty lines,3", &c));
  EXPECT_TRUE(ParseReporterLine("reporter:counter:Quality,Empty lines,-1\r", &c));
  EXPECT_TRUE(ParseReporterLine("reporter:status:half way, 50%", &c));
  for (const char* bad : {"reporter:counter:Quality,3", "reporter:counter:a,b,c,4", "reporter:counter:a,b,",
                          "reporter:counter:a,b,1x", "reporter:counter:,b,1", "reporter:counter:a,,1",
                          "reporter:counter:a,b,99999999999999999999", "reporter:other:x", "plain line"}) {
    EXPECT_FALSE(ParseReporterLine(bad, &c)) << bad;
  }
  EXPECT_EQ(Value(c, "Quality", "Empty lines"), 2);
  EXPECT_EQ(c.Values().size(), 1u);
  EXPECT_EQ(c.status(), "half way, 50%");
}

TEST(ReporterLineTest, TheSplitterFindsLinesAcrossReadsAndAtTheEnd) {
  CounterSet c;
  ReporterLineSplitter s(&c);
  s.Feed("noise\nreporter:coun");
  s.Feed("ter:g,n,4\nreporter:counter:g,n,");
  s.Feed("1\n" + std::string(100 << 10, 'x') + "reporter:counter:g,n,100\n");  // inside an over-long line
  s.Feed("reporter:status:done");
  EXPECT_EQ(c.status(), "");
  s.Finish();
  EXPECT_EQ(Value(c, "g", "n"), 5);
  EXPECT_EQ(c.status(), "done");
}

TEST(DroppedCountersTest, AJobWithoutCountersCountsIntoNothing) {
  DroppedCounters().Increment("g", "n", 1);
  DroppedCounters().SetStatus("s");
}

}  // namespace
}  // namespace mr::jobs
