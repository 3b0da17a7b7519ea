// A small SVG chart writer for mr-sim's report: line charts (metric against
// load, CDFs) and grouped bar charts (a metric per scheduler). Plain text
// out, no library; deterministic (the same chart gives the same bytes).
// tests/sim/svg_test.cc checks its structure, scales and escaping.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mr::sim::svg {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); drawn in the given order
};

struct LineChart {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  bool log_y = false;   // points with y <= 0 are left out on a log scale
  bool step = false;    // draw as a staircase (a CDF)
};

// values[s][g]: the bar of series s in group g.
struct BarChart {
  std::string title, y_label;
  std::vector<std::string> groups;    // along the x axis (e.g. schedulers)
  std::vector<std::string> series;    // bars within a group (e.g. locality levels)
  std::vector<std::vector<double>> values;
};

std::string Render(const LineChart& chart);
std::string Render(const BarChart& chart);

// Tick positions from the first multiple at or above lo to the first at or
// above hi: 1, 2 or 5 times a power of ten apart.
std::vector<double> NiceTicks(double lo, double hi, int target = 5);
// "&lt;" for '<', and so on.
std::string Escape(const std::string& text);

}  // namespace mr::sim::svg
