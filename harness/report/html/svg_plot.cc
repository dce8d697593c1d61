#include "synk/harness/report/html/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "synk/harness/report/html/svg_plot_impl.h"

namespace synk::harness {
namespace svg {

const char* const kColors[10] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                 "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// Tick and tooltip text: 1024-based suffixes for exact multiples (bytes, batch sizes), SI ones
// for other large numbers, three significant digits otherwise.
std::string label(double v) {
  char buf[32];
  const double a = std::abs(v);
  const char* binary[] = {"K", "M", "G", "T"};
  for (int k = 3; k >= 0; --k) {
    const double unit = std::ldexp(1.0, 10 * (k + 1));
    if (a >= unit && std::fmod(v, unit) == 0) {
      std::snprintf(buf, sizeof buf, "%g%s", v / unit, binary[k]);
      return buf;
    }
  }
  const char* si[] = {"k", "M", "G", "T"};
  for (int k = 3; k >= 0; --k) {
    const double unit = std::pow(1000.0, k + 1);
    if (a >= unit) {
      std::snprintf(buf, sizeof buf, "%.3g%s", v / unit, si[k]);
      return buf;
    }
  }
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// Ticks at 1, 2 or 5 times a power of ten covering [low, high].
std::vector<double> niceTicks(double low, double high) {
  const double span = std::max(high - low, 1e-12);
  const double raw = span / 5;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  }
  std::vector<double> ticks;
  for (double t = std::ceil(low / step) * step; t <= high + step * 1e-9; t += step)
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  return ticks;
}

// Tick labels that tell adjacent ticks apart: label() first, more digits where two read alike
// (a range of 812.0 to 812.9 ns is not "812, 812, 812").
std::vector<std::string> tickLabels(const std::vector<double>& ticks) {
  std::vector<std::string> out;
  for (double t : ticks)
    out.push_back(label(t));
  for (int digits = 4; digits <= 9; ++digits) {
    bool distinct = true;
    for (size_t i = 1; i < out.size(); ++i)
      distinct = distinct && out[i] != out[i - 1];
    if (distinct) break;
    for (size_t i = 0; i < ticks.size(); ++i) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.*g", digits, ticks[i]);
      out[i] = buf;
    }
  }
  return out;
}

std::string header(const std::string& id, const std::string& title, int marks, double height) {
  return "<figure class=\"plot-figure\"><svg class=\"plot\" id=\"" + htmlEscape(id) +
         "\" data-marks=\"" + std::to_string(marks) + "\" viewBox=\"0 0 " + num(kWidth) + " " +
         num(height) +
         "\" width=\"100%\" preserveAspectRatio=\"xMinYMin meet\" role=\"img\"><title>" +
         htmlEscape(title) + "</title>" + "<text x=\"" + num(kWidth / 2) +
         "\" y=\"20\" class=\"title\">" + htmlEscape(title) + "</text>";
}

std::string footer(const std::string& title) {
  return "</svg><figcaption>" + htmlEscape(title) + "</figcaption></figure>\n";
}

}  // namespace svg

namespace {

using namespace svg;

// Powers of ten inside [low, high] (low > 0); with fewer than three, their 2x and 5x too.
std::vector<double> logTicks(double low, double high) {
  std::vector<double> ticks;
  for (double t = std::pow(10, std::floor(std::log10(low))); t <= high * 1.0001; t *= 10)
    if (t >= low * 0.9999) ticks.push_back(t);
  if (ticks.size() < 3) {
    std::vector<double> more;
    for (double t = std::pow(10, std::floor(std::log10(low))); t <= high * 1.0001; t *= 10)
      for (double m : {1.0, 2.0, 5.0})
        if (t * m >= low * 0.9999 && t * m <= high * 1.0001) more.push_back(t * m);
    ticks = more;
  }
  return ticks;
}

struct Scale {
  double low, high, from, to;
  bool log;
  double operator()(double v) const {
    const double a = log ? std::log2(std::max(v, 1e-300)) : v;
    const double b = log ? std::log2(low) : low, c = log ? std::log2(high) : high;
    return from + (a - b) / (c - b == 0 ? 1 : c - b) * (to - from);
  }
};

std::string legend(const std::vector<std::string>& names, const std::vector<bool>& dashed) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    const double y = kTop + 14 + double(i) * 18;
    const double x = kWidth - kRight + 14;
    out += "<line x1=\"" + num(x) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x + 18) + "\" y2=\"" +
           num(y) + "\" stroke=\"" + kColors[i % 10] + "\" stroke-width=\"2\"" +
           (dashed[i] ? " stroke-dasharray=\"5 3\"" : "") + "/><text x=\"" + num(x + 24) +
           "\" y=\"" + num(y + 4) + "\" class=\"legend\">" + htmlEscape(names[i]) + "</text>";
  }
  return out;
}

std::string axes(const Scale& x, const Scale& y, const std::vector<double>& xticks,
                 const std::vector<double>& yticks, const std::string& x_label,
                 const std::string& y_label) {
  std::string out = "<g class=\"axes\">";
  const std::vector<std::string> ylabels = tickLabels(yticks), xlabels = tickLabels(xticks);
  for (size_t i = 0; i < yticks.size(); ++i) {
    const double t = yticks[i];
    out += "<line x1=\"" + num(kLeft) + "\" x2=\"" + num(kWidth - kRight) + "\" y1=\"" + num(y(t)) +
           "\" y2=\"" + num(y(t)) + "\" class=\"grid\"/><text x=\"" + num(kLeft - 6) + "\" y=\"" +
           num(y(t) + 4) + "\" class=\"ytick\">" + ylabels[i] + "</text>";
  }
  for (size_t i = 0; i < xticks.size(); ++i) {
    out += "<text x=\"" + num(x(xticks[i])) + "\" y=\"" + num(kHeight - kBottom + 16) +
           "\" class=\"xtick\">" + xlabels[i] + "</text>";
  }
  out += "<rect x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" +
         num(kWidth - kLeft - kRight) + "\" height=\"" + num(kHeight - kTop - kBottom) +
         "\" class=\"frame\"/>";
  out += "<text x=\"" + num(kLeft + (kWidth - kLeft - kRight) / 2) + "\" y=\"" + num(kHeight - 10) +
         "\" class=\"xlabel\">" + htmlEscape(x_label) + "</text>";
  out += "<text transform=\"translate(16 " + num(kTop + (kHeight - kTop - kBottom) / 2) +
         ") rotate(-90)\" class=\"ylabel\">" + htmlEscape(y_label) + "</text></g>";
  return out;
}

}  // namespace

std::string htmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string renderLineChart(const LineChart& chart) {
  const bool log_y = chart.log_y;
  double x0 = INFINITY, x1 = -INFINITY, y0 = chart.y_from_zero && !log_y ? 0 : INFINITY,
         y1 = -INFINITY;
  int marks = 0;
  for (const Series& s : chart.series) {
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.y[i]) || (chart.log2_x && s.x[i] <= 0) || (log_y && s.y[i] <= 0))
        continue;
      x0 = std::min(x0, s.x[i]);
      x1 = std::max(x1, s.x[i]);
      y0 = std::min(y0, s.y[i]);
      y1 = std::max(y1, s.high.empty() ? s.y[i] : s.high[i]);
      if (!s.low.empty() && (!log_y || s.low[i] > 0)) y0 = std::min(y0, s.low[i]);
      if (!s.reference) ++marks;
    }
  }
  if (marks == 0) return {};
  if (x0 == x1) x0 = chart.log2_x ? x0 / 2 : x0 - 1, x1 = chart.log2_x ? x1 * 2 : x1 + 1;
  if (log_y) {
    if (y0 == y1) y0 /= 2, y1 *= 2;
    y1 *= 1.2;
  } else {
    // One value: a range around it in proportion, not one unit (812 ns is not 812 to 813).
    if (y0 == y1)
      y0 = y0 - std::max(std::abs(y0) * 0.1, 1e-12), y1 = y1 + std::max(std::abs(y1) * 0.1, 1e-12);
    if (chart.y_from_zero) y0 = std::min(y0, 0.0);
    y1 += (y1 - y0) * 0.05;
  }
  const Scale x{x0, x1, kLeft + 20, kWidth - kRight - 20, chart.log2_x};
  const Scale y{y0, y1, kHeight - kBottom, kTop, log_y};
  std::vector<double> xticks;
  if (chart.log2_x) {
    for (double t = std::exp2(std::ceil(std::log2(x0))); t <= x1 * 1.0001; t *= 2)
      xticks.push_back(t);
    while (xticks.size() > 12) {  // keep every other one
      std::vector<double> fewer;
      for (size_t i = 0; i < xticks.size(); i += 2)
        fewer.push_back(xticks[i]);
      xticks = fewer;
    }
  } else {
    xticks = niceTicks(x0, x1);
    if (chart.integer_x) {
      // Whole numbers only; a tick a rounding error away from one (2.0000000004) is that one.
      std::vector<double> whole;
      for (double t : xticks) {
        const double r = std::round(t);
        if (std::abs(t - r) < 1e-6 && (whole.empty() || whole.back() != r)) whole.push_back(r);
      }
      xticks = whole;
    }
  }
  std::string out = header(chart.id, chart.title, marks);
  out += axes(x, y, xticks, log_y ? logTicks(y0, y1) : niceTicks(y0, y1), chart.x_label,
              chart.y_label);
  std::vector<std::string> names;
  std::vector<bool> dashed;
  for (size_t k = 0; k < chart.series.size(); ++k) {
    const Series& s = chart.series[k];
    const std::string color = kColors[k % 10];
    std::string points;
    auto drawable = [&](size_t i) { return std::isfinite(s.y[i]) && (!log_y || s.y[i] > 0); };
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (drawable(i)) points += num(x(s.x[i])) + "," + num(y(s.y[i])) + " ";
    }
    out += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\"" +
           (s.reference ? " stroke-dasharray=\"5 3\"" : "") + " points=\"" + points + "\"/>";
    for (size_t i = 0; i < s.x.size() && !s.reference; ++i) {
      if (!drawable(i)) continue;
      if (!s.low.empty() && (!log_y || s.low[i] > 0)) {
        out += "<line class=\"whisker\" stroke=\"" + color + "\" x1=\"" + num(x(s.x[i])) +
               "\" x2=\"" + num(x(s.x[i])) + "\" y1=\"" + num(y(s.low[i])) + "\" y2=\"" +
               num(y(s.high[i])) + "\"/>";
      }
      out += "<circle class=\"mark\" r=\"4\" fill=\"" + color + "\" cx=\"" + num(x(s.x[i])) +
             "\" cy=\"" + num(y(s.y[i])) + "\"><title>" + htmlEscape(s.name) + ": " +
             label(s.x[i]) + ", " + label(s.y[i]) + "</title></circle>";
    }
    names.push_back(s.name);
    dashed.push_back(s.reference);
  }
  return out + legend(names, dashed) + footer(chart.title);
}

// The thinnest bar part drawn, in pixels: num() prints one decimal, so a part thinner than 0.05
// would print as a zero height and vanish.
constexpr double kMinBarPixels = 0.5;

std::string renderBarChart(const BarChart& chart) {
  double top = 0;
  for (const BarStack& b : chart.bars) {
    double sum = 0;
    for (double v : b.parts)
      sum += v;
    top = std::max({top, sum, b.high});
  }
  if (chart.bars.empty() || top <= 0) return {};
  top *= 1.05;
  const Scale y{0, top, kHeight - kBottom, kTop, false};
  const double slot = (kWidth - kLeft - kRight) / double(chart.bars.size());
  int marks = 0;
  std::string bars;
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const double left = kLeft + slot * double(i) + slot * 0.15;
    double base = 0;
    for (size_t k = 0; k < chart.bars[i].parts.size(); ++k) {
      const double v = chart.bars[i].parts[k];
      if (v <= 0) continue;
      // A part far below the stack's scale (a rank that barely waits) still gets a hairline:
      // every part the chart declares is drawn, and its tooltip can be found.
      const double height = std::max(y(base) - y(base + v), kMinBarPixels);
      bars += "<rect class=\"mark\" fill=\"" + std::string(kColors[k % 10]) + "\" x=\"" +
              num(left) + "\" width=\"" + num(slot * 0.7) + "\" y=\"" + num(y(base) - height) +
              "\" height=\"" + num(height) + "\"><title>" + htmlEscape(chart.bars[i].label) + ": " +
              htmlEscape(chart.part_names[k]) + " " + label(v) + "</title></rect>";
      base += v;
      ++marks;
    }
    if (chart.bars[i].low >= 0 && chart.bars[i].high >= 0) {
      const double mid = left + slot * 0.35;
      bars += "<line class=\"whisker\" stroke=\"#333\" x1=\"" + num(mid) + "\" x2=\"" + num(mid) +
              "\" y1=\"" + num(y(chart.bars[i].low)) + "\" y2=\"" + num(y(chart.bars[i].high)) +
              "\"><title>" + htmlEscape(chart.bars[i].label) + ": " + label(chart.bars[i].low) +
              " … " + label(chart.bars[i].high) + "</title></line>";
    }
    bars += "<text class=\"xtick bar\" x=\"" + num(left + slot * 0.35) + "\" y=\"" +
            num(kHeight - kBottom + 16) + "\">" + htmlEscape(chart.bars[i].label) + "</text>";
  }
  std::string out = header(chart.id, chart.title, marks);
  out += axes(y, y, {}, niceTicks(0, top), "", chart.y_label);
  out += bars;
  return out + legend(chart.part_names, std::vector<bool>(chart.part_names.size(), false)) +
         footer(chart.title);
}

}  // namespace synk::harness
