#include "framework/sweep/valid_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "framework/core/error.h"

namespace luong::sweep {
namespace {

// Tableau-10: distinguishable colours; trials beyond ten reuse them with a dash pattern.
const char* const kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
const char* const kDashes[] = {"", "6,3", "2,2", "8,3,2,3"};

constexpr double kLeft = 80, kTop = 50, kPlotW = 560, kPlotH = 400, kLegendX = kLeft + kPlotW + 30;
constexpr double kRowH = 18;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string label(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// Ticks 1, 2, 5 x 10^k from the largest one <= lo to the smallest one >= hi (only powers of ten when
// that would be too many).
std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> all;
  for (int k = static_cast<int>(std::floor(std::log10(lo))) - 1; k <= static_cast<int>(std::ceil(std::log10(hi))) + 1; ++k)
    for (double m : {1.0, 2.0, 5.0}) all.push_back(m * std::pow(10.0, k));
  size_t first = 0, last = all.size() - 1;
  while (first + 1 < all.size() && all[first + 1] <= lo * (1 + 1e-12)) ++first;
  while (last > 0 && all[last - 1] >= hi * (1 - 1e-12)) --last;
  std::vector<double> ticks(all.begin() + static_cast<std::ptrdiff_t>(first), all.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  if (ticks.size() > 12) {
    std::vector<double> decades;
    const double a = std::pow(10.0, std::floor(std::log10(lo))), b = std::pow(10.0, std::ceil(std::log10(hi)));
    for (double v = a; v <= b * (1 + 1e-9); v *= 10) decades.push_back(v);
    return decades;
  }
  return ticks;
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  LUONG_CHECK(std::isfinite(lo) && std::isfinite(hi) && lo <= hi && target >= 1, "nice_ticks: bad range [", lo, ", ", hi, "]");
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
    const double pad = lo == 0.0 ? 1.0 : std::abs(lo) * 0.1;
    lo -= pad, hi += pad;
  }
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double step = (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * mag;
  std::vector<double> ticks;
  const double start = std::floor(lo / step + 1e-9), end = std::ceil(hi / step - 1e-9);
  for (double k = start; k <= end; k += 1.0) ticks.push_back(std::abs(k * step) < step * 1e-9 ? 0.0 : k * step);
  return ticks;
}

std::string valid_svg(const std::vector<PlotCurve>& curves, const std::string& title, const PlotAxis& y) {
  auto drawn = [&](double v) { return std::isfinite(v) && (!y.log_when_wide || v > 0); };
  double ymin = INFINITY, ymax = -INFINITY, xmax = 0;
  for (const auto& c : curves)
    for (const auto& [step, v] : c.points)
      if (drawn(v)) ymin = std::min(ymin, v), ymax = std::max(ymax, v), xmax = std::max<double>(xmax, step);
  const bool empty = !(ymin <= ymax);
  if (empty) ymin = 1, ymax = 10;
  const bool log_y = y.log_when_wide && ymax / ymin > 20.0;
  const std::vector<double> yt = log_y ? log_ticks(ymin, ymax) : nice_ticks(ymin, ymax, 6);
  const std::vector<double> xt = nice_ticks(0.0, std::max(1.0, xmax), 8);
  const double y0 = yt.front(), y1 = yt.back(), x1 = xt.back();
  auto fy = [&](double v) {
    const double t = log_y ? (std::log(v) - std::log(y0)) / (std::log(y1) - std::log(y0)) : (v - y0) / (y1 - y0);
    return kTop + kPlotH * (1.0 - t);
  };
  auto fx = [&](double s) { return kLeft + kPlotW * (s / x1); };
  // Room for the longest legend entry (about 7 px per character at font size 12).
  size_t longest = 0;
  for (const auto& c : curves) longest = std::max(longest, c.name.size());
  const double width = kLegendX + 40 + std::max(200.0, 7.0 * static_cast<double>(longest));
  const double height = std::max(kTop + kPlotH + 60, kTop + 10 + kRowH * static_cast<double>(curves.size()) + 20);

  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += str("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", num(width), "\" height=\"", num(height),
           "\" viewBox=\"0 0 ", num(width), " ", num(height), "\" font-family=\"sans-serif\" font-size=\"12\">\n");
  s += str("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
  s += str("<text x=\"", num(kLeft + kPlotW / 2), "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">", xml_escape(title), "</text>\n");
  // Grid lines and tick labels.
  for (double v : yt)
    s += str("<line x1=\"", num(kLeft), "\" y1=\"", num(fy(v)), "\" x2=\"", num(kLeft + kPlotW), "\" y2=\"", num(fy(v)),
             "\" stroke=\"#e0e0e0\"/>\n<text x=\"", num(kLeft - 6), "\" y=\"", num(fy(v) + 4), "\" text-anchor=\"end\">",
             label(v), "</text>\n");
  for (double v : xt)
    s += str("<line x1=\"", num(fx(v)), "\" y1=\"", num(kTop), "\" x2=\"", num(fx(v)), "\" y2=\"", num(kTop + kPlotH),
             "\" stroke=\"#e0e0e0\"/>\n<text x=\"", num(fx(v)), "\" y=\"", num(kTop + kPlotH + 18), "\" text-anchor=\"middle\">",
             label(v), "</text>\n");
  // Axes and their labels.
  s += str("<rect x=\"", num(kLeft), "\" y=\"", num(kTop), "\" width=\"", num(kPlotW), "\" height=\"", num(kPlotH),
           "\" fill=\"none\" stroke=\"black\"/>\n");
  s += str("<text x=\"", num(kLeft + kPlotW / 2), "\" y=\"", num(kTop + kPlotH + 42), "\" text-anchor=\"middle\">step</text>\n");
  s += str("<text transform=\"translate(22,", num(kTop + kPlotH / 2), ") rotate(-90)\" text-anchor=\"middle\">",
           xml_escape(y.label), log_y ? " (log scale)" : "", "</text>\n");
  if (empty)
    s += str("<text x=\"", num(kLeft + kPlotW / 2), "\" y=\"", num(kTop + kPlotH / 2), "\" text-anchor=\"middle\" fill=\"#808080\">",
             "no validation results yet</text>\n");
  for (size_t i = 0; i < curves.size(); ++i) {
    const std::string color = kColors[i % 10], dash = kDashes[(i / 10) % 4];
    const std::string dash_attr = dash.empty() ? "" : str(" stroke-dasharray=\"", dash, "\"");
    std::string pts;
    for (const auto& [step, v] : curves[i].points)
      if (drawn(v)) pts += str(pts.empty() ? "" : " ", num(fx(step)), ",", num(fy(v)));
    if (!pts.empty()) {
      s += str("<polyline fill=\"none\" stroke=\"", color, "\" stroke-width=\"2\"", dash_attr, " points=\"", pts, "\"/>\n");
      for (const auto& [step, v] : curves[i].points)
        if (drawn(v))
          s += str("<circle cx=\"", num(fx(step)), "\" cy=\"", num(fy(v)), "\" r=\"2.5\" fill=\"", color, "\"/>\n");
    }
    const double ly = kTop + 10 + kRowH * static_cast<double>(i);
    s += str("<line x1=\"", num(kLegendX), "\" y1=\"", num(ly), "\" x2=\"", num(kLegendX + 24), "\" y2=\"", num(ly),
             "\" stroke=\"", color, "\" stroke-width=\"2\"", dash_attr, "/>\n<text x=\"", num(kLegendX + 30), "\" y=\"",
             num(ly + 4), "\">", xml_escape(curves[i].name), "</text>\n");
  }
  s += "</svg>\n";
  return s;
}

}  // namespace luong::sweep
