// The report's SVG writer: ticks, scales, one element per data item, escaping.
#include "sim/svg.h"

#include <gtest/gtest.h>

#include <regex>

namespace mr::sim::svg {
namespace {

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Svg, NiceTicks) {
  EXPECT_EQ(NiceTicks(0, 1), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1.0}));
  EXPECT_EQ(NiceTicks(10, 50), (std::vector<double>{10, 20, 30, 40, 50}));
  EXPECT_EQ(NiceTicks(0, 7), (std::vector<double>{0, 2, 4, 6, 8}));  // up to cover 7
  EXPECT_EQ(NiceTicks(0, 0.996), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1.0}));
  EXPECT_EQ(NiceTicks(3, 3), (std::vector<double>{3}));
}

TEST(Svg, Escape) { EXPECT_EQ(Escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;"); }

TEST(Svg, LineChartHasOnePolylinePerSeriesInsideTheCanvas) {
  LineChart c;
  c.title = "JTT <vs> load";
  c.series = {{"FIFO", {{0.3, 45}, {0.5, 57}, {0.6, 441}}}, {"Pandas", {{0.3, 24}, {0.6, 26}}}};
  const std::string svg = Render(c);
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(Count(svg, "<polyline"), 2);
  EXPECT_EQ(Count(svg, "<circle"), 5);
  EXPECT_NE(svg.find("JTT &lt;vs&gt; load"), std::string::npos);
  // Every coordinate lies on the 640 x 400 canvas.
  EXPECT_NE(svg.find("viewBox=\"0 0 640 400\""), std::string::npos);
  std::regex coord("(cx|cy|x1|y1|x2|y2)=\"(-?[0-9.]+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), coord); it != std::sregex_iterator(); ++it) {
    const double v = std::stod((*it)[2]);
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 640);
  }
  // The highest point is at the top of the plot area (y = 36), the lowest
  // x at its left edge (x = 70).
  EXPECT_NE(svg.find("cx=\"70.00\""), std::string::npos);
  EXPECT_EQ(Render(c), svg);  // deterministic
}

TEST(Svg, LogScaleDropsNonPositiveAndSpansDecades) {
  LineChart c;
  c.log_y = true;
  c.series = {{"a", {{1, 0}, {2, 15}, {3, 2000}}}};
  const std::string svg = Render(c);
  EXPECT_EQ(Count(svg, "<circle"), 2);
  for (const char* label : {">10<", ">100<", ">1000<", ">10000<"}) {
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
}

TEST(Svg, StepChartDoublesTheCorners) {
  LineChart c;
  c.step = true;
  c.series = {{"cdf", {{1, 0.5}, {2, 1.0}}}};
  const std::string svg = Render(c);
  const size_t at = svg.find("points=\"");
  const std::string pts = svg.substr(at + 8, svg.find('"', at + 8) - at - 8);
  EXPECT_EQ(Count(pts, ","), 3);  // (1,.5) (2,.5) (2,1)
  EXPECT_EQ(Count(svg, "<circle"), 0);
}

TEST(Svg, BarChartHasOneRectPerValue) {
  BarChart c;
  c.groups = {"JoSS-T", "FIFO", "Fair"};
  c.series = {"VPS", "Cen", "off-Cen"};
  c.values = {{0.1, 0.2, 0.7}, {0.9, 0.6, 0.3}, {0.0, 0.2, 0.0}};
  const std::string svg = Render(c);
  EXPECT_EQ(Count(svg, "<rect x="), 9 + 3);  // bars + legend swatches
  EXPECT_NE(svg.find("<title>off-Cen FIFO: 0.2</title>"), std::string::npos);
  EXPECT_EQ(svg.find("rotate(-35)"), std::string::npos);
  c.groups = {"a", "b", "c", "d", "e", "f", "g"};  // many groups: slanted labels, taller canvas
  for (auto& row : c.values) row.resize(7, 0.5);
  const std::string slanted = Render(c);
  EXPECT_EQ(Count(slanted, "rotate(-35)"), 7);
  EXPECT_NE(slanted.find("viewBox=\"0 0 640 460\""), std::string::npos);
}

TEST(Svg, EmptyChartSaysSo) {
  LineChart c;
  EXPECT_NE(Render(c).find("no data"), std::string::npos);
}

}  // namespace
}  // namespace mr::sim::svg
