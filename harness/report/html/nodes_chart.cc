#include "synk/harness/report/html/nodes_chart.h"

#include <algorithm>
#include <map>

#include "synk/harness/report/html/svg_plot.h"

namespace synk::harness {
namespace {

// "cpu, 1 rank/node": the line a launched point belongs to (its axes but nodes and ranks).
std::string lineName(const PointRecord& p) {
  std::string out;
  for (const auto& [name, value] : p.axes) {
    if (name == "nodes" || name == "ranks" || name == "ranks_per_node") continue;
    out += (out.empty() ? "" : " ") +
           (name == "backend" || name == "collectives" ? value : name + "=" + value);
  }
  return out + ", " + std::to_string(p.ranks_per_node) +
         (p.ranks_per_node == 1 ? " rank/node" : " ranks/node");
}

}  // namespace

std::string nodesSpeedupChart(const std::vector<ScalingRow>& rows, Scaling scaling) {
  std::map<std::string, Series> lines;
  std::map<int, int> max_nodes;  // ranks per node -> the most nodes measured with it
  for (const ScalingRow& row : rows) {
    const PointRecord& p = *row.point;
    if (p.nodes <= 0 || !row.speedup) continue;
    Series& s = lines[lineName(p)];
    s.name = lineName(p);
    s.x.push_back(p.nodes);
    s.y.push_back(*row.speedup);
    s.low.push_back(row.speedup_ci ? row.speedup_ci->low : *row.speedup);
    s.high.push_back(row.speedup_ci ? row.speedup_ci->high : *row.speedup);
    max_nodes[p.ranks_per_node] = std::max(max_nodes[p.ranks_per_node], p.nodes);
  }
  if (lines.empty()) return "";
  LineChart chart{"speedup-nodes",
                  std::string("Speedup vs nodes, one line per ranks per node (") +
                      scalingName(scaling) + " scaling against 1 rank, 95 % bootstrap whiskers)",
                  "nodes",
                  "speedup",
                  true,
                  false,
                  true,
                  {}};
  for (auto& [name, s] : lines)
    chart.series.push_back(std::move(s));
  // Ideal: every rank of every node as fast as the one rank alone.
  for (const auto& [per_node, nodes] : max_nodes) {
    chart.series.push_back({"ideal, " + std::to_string(per_node) + " per node",
                            {1, double(nodes)},
                            {double(per_node), double(per_node * nodes)},
                            {},
                            {},
                            true});
  }
  return renderLineChart(chart);
}

}  // namespace synk::harness
