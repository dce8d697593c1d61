// harness/report/html/nodes_chart.h: speedup over nodes, one line per ranks per node, drawn only
// for launched points.
#include <catch2/catch.hpp>

#include "synk/harness/report/html/nodes_chart.h"

using namespace synk::harness;

namespace {

PointRecord launched(int nodes, int per_node) {
  PointRecord p;
  p.nodes = nodes;
  p.ranks_per_node = per_node;
  p.axes = {{"backend", "cpu"},
            {"batch", "32"},
            {"nodes", std::to_string(nodes)},
            {"ranks", std::to_string(nodes * per_node)},
            {"ranks_per_node", std::to_string(per_node)}};
  return p;
}

}  // namespace

TEST_CASE("speedup over nodes: a line per ranks per node, its ideal beside it", "[harness]") {
  const std::vector<PointRecord> points = {launched(1, 1), launched(2, 1), launched(4, 1),
                                           launched(1, 2), launched(2, 2)};
  std::vector<ScalingRow> rows;
  for (const PointRecord& p : points) {
    ScalingRow row;
    row.point = &p;
    row.ranks = p.nodes * p.ranks_per_node;
    row.speedup = 0.9 * row.ranks;
    rows.push_back(row);
  }
  const std::string svg = nodesSpeedupChart(rows, Scaling::Weak);
  CHECK(svg.find("id=\"speedup-nodes\"") != std::string::npos);
  CHECK(svg.find("data-marks=\"5\"") != std::string::npos);  // every point, once
  CHECK(svg.find("cpu batch=32, 1 rank/node") != std::string::npos);
  CHECK(svg.find("cpu batch=32, 2 ranks/node") != std::string::npos);
  CHECK(svg.find("ideal, 2 per node") != std::string::npos);
  // Forked points (no launch line) have no such chart.
  PointRecord forked = launched(1, 1);
  forked.nodes = 0;
  rows.resize(1);
  rows[0].point = &forked;
  CHECK(nodesSpeedupChart(rows, Scaling::Weak).empty());
}
