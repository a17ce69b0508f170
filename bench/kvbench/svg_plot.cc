#include "bench/kvbench/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sift::bench {
namespace {

constexpr double kPanelWidth = 520;
constexpr double kPanelHeight = 400;
constexpr double kMarginLeft = 70;
constexpr double kMarginRight = 20;
constexpr double kMarginTop = 40;
constexpr double kMarginBottom = 50;
constexpr double kTitleHeight = 36;
constexpr double kCaptionHeight = 28;

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
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

// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `ticks`
// intervals over `span`.
double NiceStep(double span, int ticks) {
  if (span <= 0) return 1;
  const double raw = span / ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double nice = norm < 1.5 ? 1 : norm < 3.5 ? 2 : norm < 7.5 ? 5 : 10;
  return nice * mag;
}

std::string FormatTick(double v) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 0.01 && a < 1e5) return absl::StrFormat("%g", v);
  return absl::StrFormat("%.0e", v);
}

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  // Position in [0, 1] along the axis.
  double Frac(double v) const {
    if (log) {
      return (std::log10(v) - std::log10(lo)) /
             (std::log10(hi) - std::log10(lo));
    }
    return (v - lo) / (hi - lo);
  }
  std::vector<double> Ticks() const {
    std::vector<double> t;
    if (log) {
      for (double d = lo; d <= hi * 1.0001; d *= 10) t.push_back(d);
    } else {
      const double step = NiceStep(hi - lo, 5);
      for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-6;
           v += step) {
        t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
      }
    }
    return t;
  }
};

void RenderPanel(const PlotPanel& p, double x0, double y0, std::string* svg) {
  // Data ranges.
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin;
  double ymin = xmin, ymax = -xmin;
  for (const PlotSeries& s : p.series) {
    for (auto [x, y] : s.points) {
      if (p.log_y && y <= 0) continue;
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x);
      ymin = std::min(ymin, y);
      ymax = std::max(ymax, y);
    }
  }
  if (!(xmin <= xmax)) xmin = 0, xmax = 1;
  if (!(ymin <= ymax)) ymin = p.log_y ? 1e-4 : 0, ymax = 1;
  Axis xa{xmin, xmax == xmin ? xmin + 1 : xmax, false};
  Axis ya;
  ya.log = p.log_y;
  if (p.log_y) {
    ya.lo = std::pow(10.0, std::floor(std::log10(ymin)));
    ya.hi = std::pow(10.0, std::ceil(std::log10(ymax)));
    if (ya.hi <= ya.lo) ya.hi = ya.lo * 10;
  } else {
    ya.lo = std::min(0.0, ymin);
    const double step = NiceStep(ymax - ya.lo, 5);
    ya.hi = std::ceil(ymax / step) * step;
    if (ya.hi <= ya.lo) ya.hi = ya.lo + 1;
  }

  const double pw = kPanelWidth - kMarginLeft - kMarginRight;
  const double ph = kPanelHeight - kMarginTop - kMarginBottom;
  const double left = x0 + kMarginLeft, top = y0 + kMarginTop;
  auto px = [&](double x) { return left + xa.Frac(x) * pw; };
  auto py = [&](double y) { return top + (1 - ya.Frac(y)) * ph; };

  absl::StrAppendFormat(svg,
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                        "font-size=\"15\" font-weight=\"bold\">%s</text>\n",
                        left + pw / 2, y0 + 24, Escape(p.title));
  // Grid and ticks.
  for (double t : xa.Ticks()) {
    absl::StrAppendFormat(
        svg,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
        "stroke=\"#e0e0e0\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
        "text-anchor=\"middle\" font-size=\"12\">%s</text>\n",
        px(t), top, px(t), top + ph, px(t), top + ph + 16, FormatTick(t));
  }
  for (double t : ya.Ticks()) {
    absl::StrAppendFormat(
        svg,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
        "stroke=\"#e0e0e0\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
        "text-anchor=\"end\" font-size=\"12\">%s</text>\n",
        left, py(t), left + pw, py(t), left - 6, py(t) + 4, FormatTick(t));
  }
  absl::StrAppendFormat(svg,
                        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                        "height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n",
                        left, top, pw, ph);
  absl::StrAppendFormat(svg,
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                        "font-size=\"13\">%s</text>\n",
                        left + pw / 2, top + ph + 36, Escape(p.x_label));
  absl::StrAppendFormat(svg,
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                        "font-size=\"13\" transform=\"rotate(-90 %.1f "
                        "%.1f)\">%s</text>\n",
                        x0 + 18, top + ph / 2, x0 + 18, top + ph / 2,
                        Escape(p.y_label));

  // Series: polylines broken where a point cannot be drawn.
  for (const PlotSeries& s : p.series) {
    std::string dash = s.dashed ? " stroke-dasharray=\"6 4\"" : "";
    std::string pts;
    auto flush = [&] {
      if (!pts.empty()) {
        absl::StrAppendFormat(svg,
                              "<polyline points=\"%s\" fill=\"none\" "
                              "stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                              pts, s.color, dash);
      }
      pts.clear();
    };
    for (auto [x, y] : s.points) {
      if (p.log_y && y <= 0) {
        flush();
        continue;
      }
      absl::StrAppendFormat(&pts, "%s%.1f,%.1f", pts.empty() ? "" : " ", px(x),
                            py(y));
    }
    flush();
    if (s.markers) {
      for (auto [x, y] : s.points) {
        if (p.log_y && y <= 0) continue;
        absl::StrAppendFormat(
            svg, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
            px(x), py(y), s.color);
      }
    }
  }

  // Legend, top right inside the plot area.
  const double legend_height = 18.0 * p.series.size() + 6;
  const double lx = p.legend_bottom_left ? left + 10 : left + pw - 190;
  double ly = p.legend_bottom_left ? top + ph - legend_height - 6 : top + 10;
  absl::StrAppendFormat(svg,
                        "<rect x=\"%.1f\" y=\"%.1f\" width=\"184\" "
                        "height=\"%.1f\" fill=\"white\" fill-opacity=\"0.85\" "
                        "stroke=\"#ccc\"/>\n",
                        lx - 4, ly - 4, legend_height);
  for (const PlotSeries& s : p.series) {
    absl::StrAppendFormat(svg,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                          "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n"
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%s"
                          "</text>\n",
                          lx, ly + 7, lx + 24, ly + 7, s.color,
                          s.dashed ? " stroke-dasharray=\"6 4\"" : "", lx + 30,
                          ly + 11, Escape(s.label));
    ly += 18;
  }
}

}  // namespace

std::string RenderSvg(const std::string& title,
                      const std::vector<PlotPanel>& panels,
                      const std::string& caption) {
  const double width = kPanelWidth * std::max<size_t>(1, panels.size());
  const double height =
      kTitleHeight + kPanelHeight + (caption.empty() ? 0 : kCaptionHeight);
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
      "font-family=\"Helvetica, Arial, sans-serif\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" font-size=\"17\" "
      "font-weight=\"bold\">%s</text>\n",
      width, height, width, height, width / 2, Escape(title));
  for (size_t i = 0; i < panels.size(); ++i) {
    RenderPanel(panels[i], kPanelWidth * i, kTitleHeight, &svg);
  }
  if (!caption.empty()) {
    absl::StrAppendFormat(&svg,
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                          "font-size=\"11\" fill=\"#555\">%s</text>\n",
                          width / 2, kTitleHeight + kPanelHeight + 16,
                          Escape(caption));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace sift::bench
