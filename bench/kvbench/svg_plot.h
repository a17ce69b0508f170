#ifndef SIFT_BENCH_KVBENCH_SVG_PLOT_H_
#define SIFT_BENCH_KVBENCH_SVG_PLOT_H_

// A small line-chart writer: panels of x/y series drawn side by side as one
// self-contained SVG document (no scripts, no external fonts), good enough
// for the sweep picture the README shows.

#include <string>
#include <utility>
#include <vector>

namespace sift::bench {

struct PlotSeries {
  std::string label;
  std::string color;  // any SVG color, e.g. "#1f77b4"
  bool dashed = false;
  bool markers = true;
  std::vector<std::pair<double, double>> points;  // (x, y), in x order
};

struct PlotPanel {
  std::string title;
  std::string x_label;
  std::string y_label;
  // Logarithmic y axis; points with y <= 0 are left out (and break the line).
  bool log_y = false;
  // Where the legend goes: top right (default) or bottom left, whichever
  // the data leaves free.
  bool legend_bottom_left = false;
  std::vector<PlotSeries> series;
};

// The SVG document for `panels` under a common `title`. A caption line (e.g.
// the settings of the run) is printed under the panels if not empty.
std::string RenderSvg(const std::string& title,
                      const std::vector<PlotPanel>& panels,
                      const std::string& caption);

}  // namespace sift::bench

#endif  // SIFT_BENCH_KVBENCH_SVG_PLOT_H_
