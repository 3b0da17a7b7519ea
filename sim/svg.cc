// The SVG chart writer (see svg.h). Layout: a 640-wide canvas, a 420 x 314
// plot area inside fixed margins (a taller bottom one for slanted bar
// labels), ticks and labels on the left and bottom axes, the legend on the
// right of the plot.
#include "sim/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/xml_escape.h"

namespace mr::sim::svg {
namespace {

constexpr double kW = 640, kLeft = 70, kRight = 150, kTop = 36, kPlotW = kW - kLeft - kRight;
constexpr double kPlotH = 314;  // the canvas is kTop + kPlotH + the bottom margin high
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                               "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string Label(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void Open(std::ostringstream& os, const std::string& title, double height) {
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW << "\" height=\"" << height
     << "\" viewBox=\"0 0 " << kW << " " << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << kW / 2 << "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">"
     << Escape(title) << "</text>\n";
}

void Axes(std::ostringstream& os, const std::string& x_label, const std::string& y_label) {
  os << "<line x1=\"" << kLeft << "\" y1=\"" << kTop + kPlotH << "\" x2=\"" << kLeft + kPlotW
     << "\" y2=\"" << kTop + kPlotH << "\" stroke=\"black\"/>\n"
     << "<line x1=\"" << kLeft << "\" y1=\"" << kTop << "\" x2=\"" << kLeft << "\" y2=\""
     << kTop + kPlotH << "\" stroke=\"black\"/>\n"
     << "<text x=\"" << kLeft + kPlotW / 2 << "\" y=\"" << kTop + kPlotH + 40
     << "\" text-anchor=\"middle\">" << Escape(x_label) << "</text>\n"
     << "<text transform=\"translate(16," << kTop + kPlotH / 2
     << ") rotate(-90)\" text-anchor=\"middle\">" << Escape(y_label) << "</text>\n";
}

void Legend(std::ostringstream& os, const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    const double y = kTop + 10 + 18 * static_cast<double>(i);
    os << "<rect x=\"" << kLeft + kPlotW + 12 << "\" y=\"" << Num(y - 8) << "\" width=\"12\" height=\"10\" fill=\""
       << kColors[i % 8] << "\"/>\n<text x=\"" << kLeft + kPlotW + 30 << "\" y=\"" << Num(y) << "\""
       << (names[i].size() > 18 ? " font-size=\"9\"" : "") << ">" << Escape(names[i]) << "</text>\n";
  }
}

// Maps data to the plot area.
struct Scale {
  double lo, hi;
  bool log;
  double pixels, origin;
  bool flip;  // y grows upwards
  double operator()(double v) const {
    const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi;
    const double t = ((log ? std::log10(v) : v) - a) / (b - a);
    return flip ? origin + pixels - t * pixels : origin + t * pixels;
  }
};

}  // namespace

std::string Escape(const std::string& text) { return XmlEscape(text); }

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double mult = 1;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    mult = m;
    if (m * mag >= raw) break;
  }
  // Tick k is k·mult·mag, computed as an integer over a power of ten so
  // that 0.6 prints as 0.6.
  auto tick = [&](double k) { return mag < 1 ? k * mult / std::round(1 / mag) : k * mult * mag; };
  const double step = mult * mag;
  std::vector<double> ticks;
  double k = std::ceil(lo / step - 1e-9);
  for (; tick(k) <= hi + step * 1e-9; ++k) ticks.push_back(tick(k) == 0 ? 0.0 : tick(k));
  if (ticks.empty() || ticks.back() < hi - step * 1e-9) ticks.push_back(tick(k));  // cover hi
  return ticks;
}

std::string Render(const LineChart& c) {
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const Series& s : c.series) {
    for (auto [x, y] : s.points) {
      if (c.log_y && y <= 0) continue;
      xlo = std::min(xlo, x), xhi = std::max(xhi, x), ylo = std::min(ylo, y), yhi = std::max(yhi, y);
    }
  }
  std::ostringstream os;
  Open(os, c.title, kTop + kPlotH + 50);
  Axes(os, c.x_label, c.y_label);
  if (xlo > xhi) {  // no data
    os << "<text x=\"" << kLeft + kPlotW / 2 << "\" y=\"" << kTop + kPlotH / 2
       << "\" text-anchor=\"middle\">no data</text>\n</svg>\n";
    return os.str();
  }
  if (xhi == xlo) xlo -= 1, xhi += 1;
  std::vector<double> yt;
  if (c.log_y) {
    ylo = std::pow(10.0, std::floor(std::log10(ylo)));
    yhi = std::pow(10.0, std::ceil(std::log10(yhi)));
    if (yhi <= ylo) yhi = ylo * 10;
    for (double t = ylo; t <= yhi * 1.0001; t *= 10) yt.push_back(t);
  } else {
    ylo = std::min(0.0, ylo);
    if (yhi <= ylo) yhi = ylo + 1;
    yt = NiceTicks(ylo, yhi);
    yhi = yt.back();
  }
  const std::vector<double> xt = NiceTicks(xlo, xhi);
  const Scale sx{xlo, xhi, false, kPlotW, kLeft, false};
  const Scale sy{ylo, yhi, c.log_y, kPlotH, kTop, true};
  for (double t : xt) {
    if (t < xlo || t > xhi) continue;
    os << "<line x1=\"" << Num(sx(t)) << "\" y1=\"" << kTop + kPlotH << "\" x2=\"" << Num(sx(t))
       << "\" y2=\"" << kTop + kPlotH + 4 << "\" stroke=\"black\"/><text x=\"" << Num(sx(t))
       << "\" y=\"" << kTop + kPlotH + 16 << "\" text-anchor=\"middle\">" << Label(t) << "</text>\n";
  }
  for (double t : yt) {
    os << "<line x1=\"" << kLeft - 4 << "\" y1=\"" << Num(sy(t)) << "\" x2=\"" << kLeft + kPlotW
       << "\" y2=\"" << Num(sy(t)) << "\" stroke=\"#ddd\"/><text x=\"" << kLeft - 6 << "\" y=\""
       << Num(sy(t) + 4) << "\" text-anchor=\"end\">" << Label(t) << "</text>\n";
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    names.push_back(s.name);
    os << "<polyline fill=\"none\" stroke=\"" << kColors[i % 8] << "\" stroke-width=\"2\" points=\"";
    bool first = true;
    double prev_y = 0;
    for (auto [x, y] : s.points) {
      if (c.log_y && y <= 0) continue;
      if (c.step && !first) os << Num(sx(x)) << "," << Num(sy(prev_y)) << " ";
      os << Num(sx(x)) << "," << Num(sy(y)) << " ";
      prev_y = y;
      first = false;
    }
    os << "\"/>\n";
    if (!c.step) {
      for (auto [x, y] : s.points) {
        if (c.log_y && y <= 0) continue;
        os << "<circle cx=\"" << Num(sx(x)) << "\" cy=\"" << Num(sy(y)) << "\" r=\"2.5\" fill=\""
           << kColors[i % 8] << "\"/>\n";
      }
    }
  }
  Legend(os, names);
  os << "</svg>\n";
  return os.str();
}

std::string Render(const BarChart& c) {
  double yhi = 0;
  for (const auto& row : c.values) {
    for (double v : row) yhi = std::max(yhi, v);
  }
  if (yhi <= 0) yhi = 1;
  const std::vector<double> yt = NiceTicks(0, yhi);
  yhi = yt.back();
  // Many groups: labels slanted, in a taller bottom margin.
  const bool slant = c.groups.size() > 6;
  std::ostringstream os;
  Open(os, c.title, kTop + kPlotH + (slant ? 110 : 50));
  Axes(os, "", c.y_label);
  const Scale sy{0, yhi, false, kPlotH, kTop, true};
  for (double t : yt) {
    os << "<line x1=\"" << kLeft - 4 << "\" y1=\"" << Num(sy(t)) << "\" x2=\"" << kLeft + kPlotW
       << "\" y2=\"" << Num(sy(t)) << "\" stroke=\"#ddd\"/><text x=\"" << kLeft - 6 << "\" y=\""
       << Num(sy(t) + 4) << "\" text-anchor=\"end\">" << Label(t) << "</text>\n";
  }
  const double group_w = kPlotW / static_cast<double>(std::max<size_t>(1, c.groups.size()));
  const double bar_w = group_w * 0.8 / static_cast<double>(std::max<size_t>(1, c.series.size()));
  for (size_t g = 0; g < c.groups.size(); ++g) {
    const double gx = kLeft + group_w * static_cast<double>(g);
    for (size_t s = 0; s < c.series.size(); ++s) {
      const double v = g < c.values[s].size() ? c.values[s][g] : 0;
      const double x = gx + group_w * 0.1 + bar_w * static_cast<double>(s);
      os << "<rect x=\"" << Num(x) << "\" y=\"" << Num(sy(v)) << "\" width=\"" << Num(bar_w)
         << "\" height=\"" << Num(kTop + kPlotH - sy(v)) << "\" fill=\"" << kColors[s % 8]
         << "\"><title>" << Escape(c.series[s] + " " + c.groups[g] + ": " + Label(v))
         << "</title></rect>\n";
    }
    if (slant) {
      os << "<text transform=\"translate(" << Num(gx + group_w / 2 + 3) << "," << kTop + kPlotH + 10
         << ") rotate(-35)\" text-anchor=\"end\" font-size=\"10\">" << Escape(c.groups[g]) << "</text>\n";
    } else {
      os << "<text x=\"" << Num(gx + group_w / 2) << "\" y=\"" << kTop + kPlotH + 14
         << "\" text-anchor=\"middle\">" << Escape(c.groups[g]) << "</text>\n";
    }
  }
  Legend(os, c.series);
  os << "</svg>\n";
  return os.str();
}

}  // namespace mr::sim::svg
