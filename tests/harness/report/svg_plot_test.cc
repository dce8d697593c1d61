// The SVG plots' marks (harness/report/html/svg_plot.h): every part a bar chart declares is drawn
// with a height the browser shows — the HTML test counts drawn marks against the declared count.
#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

#include "synk/harness/report/html/svg_plot.h"

using namespace synk::harness;

namespace {

std::vector<double> markHeights(const std::string& svg) {
  std::vector<double> heights;
  const std::regex rect(R"re(<rect class="mark"[^>]* height="([0-9.]+)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator();
       ++it)
    heights.push_back(std::stod((*it)[1]));
  return heights;
}

}  // namespace

TEST_CASE("bar chart: a part far below the scale is still drawn, zero parts are not declared",
          "[harness]") {
  BarChart chart{"split", "time", "ms", {"work", "wait"}, {}};
  chart.bars.push_back({"1 rank", {1000.0, 0.01}});  // a rank that barely waits: 1e-5 of the bar
  chart.bars.push_back({"2 ranks", {800.0, 0.0}});   // one that does not wait at all
  const std::string svg = renderBarChart(chart);
  REQUIRE(svg.find("data-marks=\"3\"") != std::string::npos);
  const std::vector<double> heights = markHeights(svg);
  REQUIRE(heights.size() == 3);
  for (double h : heights)
    CHECK(h > 0.0);
}
