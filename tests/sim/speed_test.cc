// NodeSpeeds (sim/speed.h): the piecewise arithmetic of speed factors and
// episodes that times every compute phase of mr-sim.
#include "sim/speed.h"

#include <gtest/gtest.h>

namespace mr::sim {
namespace {

// A uniform node is the plain sum, bit for bit (the outputs of scenarios
// without speeds depend on it).
TEST(NodeSpeeds, UniformNodeIsThePlainSum) {
  NodeSpeeds s(2);
  EXPECT_TRUE(s.Uniform(0));
  EXPECT_EQ(s.End(0, 0.1, 0.2), 0.1 + 0.2);
  EXPECT_EQ(s.End(1, 12345.678, 9876.5), 12345.678 + 9876.5);
  EXPECT_DOUBLE_EQ(s.Fraction(0, 1000, 3000, 1500), 0.25);
}

// 0.25: four times as long.
TEST(NodeSpeeds, BaseFactorStretchesTheWork) {
  NodeSpeeds s(2);
  s.SetBase(1, 0.25);
  EXPECT_FALSE(s.Uniform(1));
  EXPECT_DOUBLE_EQ(s.End(1, 1000, 10000), 41000);
  EXPECT_DOUBLE_EQ(s.Work(1, 1000, 41000), 10000);
  EXPECT_DOUBLE_EQ(s.Fraction(1, 1000, 41000, 21000), 0.5);
  EXPECT_DOUBLE_EQ(s.End(0, 1000, 10000), 11000);  // the other node is untouched
}

// Factor 1, then 0.5 in [1000, 3000), then 1: 3000 ms of work from 0 is
// 1000 by t = 1000, 1000 more by 3000, the last 1000 by 4000.
TEST(NodeSpeeds, AnEpisodeSlowsOnlyItsSpan) {
  NodeSpeeds s(1);
  s.AddEpisode(0, 1000, 2000, 0.5);
  EXPECT_DOUBLE_EQ(s.FactorAt(0, 999), 1);
  EXPECT_DOUBLE_EQ(s.FactorAt(0, 1000), 0.5);
  EXPECT_DOUBLE_EQ(s.FactorAt(0, 3000), 1);
  EXPECT_DOUBLE_EQ(s.End(0, 0, 3000), 4000);
  EXPECT_DOUBLE_EQ(s.End(0, 2000, 500), 3000);   // inside the episode
  EXPECT_DOUBLE_EQ(s.End(0, 3500, 500), 4000);   // after it
  EXPECT_DOUBLE_EQ(s.Work(0, 0, 4000), 3000);
}

// Frozen (0) in [1000, 6000): no progress, so the work waits it out.
TEST(NodeSpeeds, AFreezeStopsProgress) {
  NodeSpeeds s(1);
  s.AddEpisode(0, 1000, 5000, 0);
  EXPECT_TRUE(s.Frozen(0, 1000));
  EXPECT_FALSE(s.Frozen(0, 6000));
  EXPECT_DOUBLE_EQ(s.End(0, 0, 2000), 7000);
  EXPECT_DOUBLE_EQ(s.End(0, 2000, 1000), 7000);  // starts frozen
  EXPECT_DOUBLE_EQ(s.Fraction(0, 0, 7000, 1000), 0.5);
  EXPECT_DOUBLE_EQ(s.Fraction(0, 0, 7000, 5999), 0.5);  // no progress while frozen
}

// Episodes over a slow base, back to back: each replaces the base.
TEST(NodeSpeeds, EpisodesReplaceTheBaseAndMayTouch) {
  NodeSpeeds s(1);
  s.SetBase(0, 0.5);
  s.AddEpisode(0, 2000, 1000, 2);  // added out of order on purpose
  s.AddEpisode(0, 1000, 1000, 1);
  EXPECT_DOUBLE_EQ(s.FactorAt(0, 0), 0.5);
  EXPECT_DOUBLE_EQ(s.FactorAt(0, 1500), 1);
  EXPECT_DOUBLE_EQ(s.FactorAt(0, 2500), 2);
  EXPECT_DOUBLE_EQ(s.FactorAt(0, 3000), 0.5);
  // 0..1000: 500; 1000..2000: 1000; 2000..3000: 2000; then 0.5.
  EXPECT_DOUBLE_EQ(s.Work(0, 0, 3000), 3500);
  EXPECT_DOUBLE_EQ(s.End(0, 0, 3500), 3000);
  EXPECT_DOUBLE_EQ(s.End(0, 0, 4000), 4000);
}

// An attempt's progress: its read counts at wall speed, its compute at the
// node's; a uniform node is linear from launch to end.
TEST(NodeSpeeds, ProgressCountsTheReadThenTheWork) {
  NodeSpeeds s(2);
  EXPECT_DOUBLE_EQ(s.Progress(0, 0, 1000, 11000, 5500), 0.5);
  s.SetBase(1, 0.25);
  // Read 0..1000 (1000), then 2000 of work at 0.25 until 9000: 3000 in all.
  EXPECT_DOUBLE_EQ(s.Progress(1, 0, 1000, 9000, 500), 500.0 / 3000);
  EXPECT_DOUBLE_EQ(s.Progress(1, 0, 1000, 9000, 5000), 2000.0 / 3000);
  EXPECT_DOUBLE_EQ(s.Progress(1, 0, 1000, 9000, 20000), 1);
}

}  // namespace
}  // namespace mr::sim
