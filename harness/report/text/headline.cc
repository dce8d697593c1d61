#include "synk/harness/report/text/headline.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "synk/harness/base/text_table.h"
#include "synk/harness/report/text/collectives_table.h"
#include "synk/harness/report/text/report_text.h"

namespace synk::harness {
namespace {

std::string axis(const PointRecord& p, const char* name) {
  const auto found = p.axes.find(name);
  return found == p.axes.end() ? "" : found->second;
}

std::string backendName(const std::string& name) {
  if (name == "nccl") return "NCCL";
  if (name == "host") return "host staging";
  if (name == "cpu") return "CPU";
  return name;
}

// "2 GPUs (cuda, nccl)", "2 CPU ranks".
std::string ranksText(int ranks, const std::string& backend, const std::string& collectives) {
  if (backend == "cpu") return std::to_string(ranks) + " CPU rank" + (ranks == 1 ? "" : "s");
  std::string out = std::to_string(ranks) + " GPU" + (ranks == 1 ? "" : "s");
  if (!collectives.empty() && collectives != "plugin") out += " (" + backendName(collectives) + ")";
  return out;
}

std::vector<std::string> trainHeadline(const RunData& data, Scaling scaling) {
  const std::vector<ScalingRow> rows = scalingRows(data.points, runScaling(data.run), scaling);
  // Per backend and collectives path: the row with the most ranks (then the largest batch).
  std::map<std::string, const ScalingRow*> per_path;
  for (const ScalingRow& row : rows) {
    if (row.step_s <= 0 || !row.speedup || row.ranks < 2) continue;
    const std::string path = axis(*row.point, "backend") + "|" + axis(*row.point, "collectives");
    const ScalingRow*& b = per_path[path];
    if (!b || row.ranks > b->ranks || (row.ranks == b->ranks && row.batch > b->batch)) b = &row;
  }
  std::vector<std::string> out;
  for (const auto& [path, row] : per_path) {
    const PointRecord& p = *row->point;
    // A point launched over nodes: "2 nodes x 1 CPU rank".
    const std::string nodes = axis(p, "nodes");
    // The stored column, else the axis (a hand-written database may have either; atoi: no throw).
    const int per_node =
        p.ranks_per_node > 0 ? p.ranks_per_node : std::atoi(axis(p, "ranks_per_node").c_str());
    const std::string where =
        nodes.empty() || per_node <= 0
            ? ranksText(row->ranks, axis(p, "backend"), axis(p, "collectives"))
            : nodes + (nodes == "1" ? " node x " : " nodes x ") +
                  ranksText(per_node, axis(p, "backend"), axis(p, "collectives"));
    std::string line = where + ": " + formatFixed(*row->efficiency * 100, 0) + " % efficiency, " +
                       formatFixed(*row->speedup, 2) + "x (" + scalingName(scaling) +
                       " scaling, batch " + std::to_string(row->batch) +
                       (scaling == Scaling::Weak ? " per rank" : "") + ")";
    if (row->speedup_ci) {
      line += ", 95 % interval " + formatFixed(row->speedup_ci->low, 2) + "-" +
              formatFixed(row->speedup_ci->high, 2);
    }
    if (row->joules_per_sample) {
      line += "; " + formatJoules(*row->joules_per_sample) + " per sample" +
              (row->energy_scaling ? " (" + formatFixed(*row->energy_scaling * 100, 0) +
                                         " % of 1 GPU's energy efficiency)"
                                   : "");
    }
    out.push_back(line);
  }
  // NCCL against host staging at the same point otherwise.
  for (const ScalingRow& row : rows) {
    if (axis(*row.point, "collectives") != "nccl" || row.step_s <= 0) continue;
    std::map<std::string, std::string> twin = row.point->axes;
    twin["collectives"] = "host";
    const auto host = std::find_if(rows.begin(), rows.end(), [&](const ScalingRow& r) {
      return r.point->axes == twin && r.step_s > 0;
    });
    if (host == rows.end()) continue;
    // Only the largest rank count's pair makes the headline.
    const bool larger = std::any_of(rows.begin(), rows.end(), [&](const ScalingRow& r) {
      return axis(*r.point, "collectives") == "nccl" && r.step_s > 0 && r.ranks > row.ranks;
    });
    if (larger) continue;
    out.push_back("NCCL " + formatFixed(host->step_s / row.step_s, 2) +
                  "x faster than host staging at " + std::to_string(row.ranks) + " GPUs, batch " +
                  std::to_string(row.batch));
    break;
  }
  if (out.empty()) {
    for (const ScalingRow& row : rows) {
      if (row.step_s <= 0) continue;
      out.push_back("only one rank measured: " + formatSeconds(row.step_s) + " a step, " +
                    formatRate(row.samples_per_s) + " samples/s (batch " +
                    std::to_string(row.batch) + ")");
      break;
    }
  }
  return out;
}

std::vector<std::string> collectivesHeadline(const RunData& data) {
  const std::vector<CollectiveRow> rows = collectiveRows(data);
  std::vector<std::pair<std::string, int>> groups;
  for (const CollectiveRow& r : rows)
    if (std::find(groups.begin(), groups.end(), std::pair{r.op, r.ranks}) == groups.end())
      groups.push_back({r.op, r.ranks});
  std::vector<std::string> out;
  for (const auto& [op, ranks] : groups) {
    // Per backend: the best busbw over sizes and forms, and every size's best busbw.
    std::map<std::string, std::map<int64_t, double>> by_size;
    for (const CollectiveRow& r : rows) {
      if (r.op != op || r.ranks != ranks) continue;
      for (const auto& [backend, cells] : r.cells)
        for (const CollectiveCell& c : cells)
          if (c.present && c.status == PointStatus::ok && c.busbw > 0)
            by_size[backend][r.size] = std::max(by_size[backend][r.size], c.busbw);
    }
    if (by_size.empty()) continue;
    std::vector<std::string> order;  // nccl, host, cpu first
    for (const char* b : {"nccl", "host", "cpu"})
      if (by_size.count(b)) order.push_back(b);
    for (const auto& [b, sizes] : by_size)
      if (std::find(order.begin(), order.end(), b) == order.end()) order.push_back(b);
    std::string line = op + ", " + std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s") + ":";
    for (size_t i = 0; i < order.size(); ++i) {
      const auto& sizes = by_size[order[i]];
      const auto peak =
          std::max_element(sizes.begin(), sizes.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
      line += std::string(i ? ";" : "") + " " + backendName(order[i]) + " busbw " +
              formatFixed(peak->second, peak->second >= 10 ? 1 : 2) + " GB/s at " +
              sizeText(peak->first);
    }
    if (order.size() > 1) {
      const auto& first = by_size[order[0]];
      const auto& second = by_size[order[1]];
      for (auto it = first.rbegin(); it != first.rend(); ++it) {
        const auto other = second.find(it->first);
        if (other == second.end() || other->second <= 0) continue;
        line += "; " + backendName(order[0]) + " " + formatFixed(it->second / other->second, 1) +
                "x " + backendName(order[1]) + " at " + sizeText(it->first);
        break;
      }
    }
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> microHeadline(const RunData& data) {
  const AnalysedPoint* fastest = nullptr;
  const AnalysedPoint* slowest = nullptr;
  int n = 0;
  for (const AnalysedPoint& a : data.points) {
    if (a.summary.step_s <= 0) continue;
    ++n;
    if (!fastest || a.summary.step_s < fastest->summary.step_s) fastest = &a;
    if (!slowest || a.summary.step_s > slowest->summary.step_s) slowest = &a;
  }
  if (!n) return {};
  return {std::to_string(n) + " micro-benchmark(s): from " +
          formatSeconds(fastest->summary.step_s) + " (" + axis(fastest->record, "benchmark") +
          ") to " + formatSeconds(slowest->summary.step_s) + " (" +
          axis(slowest->record, "benchmark") + ") per iteration"};
}

}  // namespace

std::string sizeText(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + " " + units[u];
}

std::vector<std::string> headline(const RunData& data, Scaling scaling) {
  std::vector<std::string> out = data.collectives() ? collectivesHeadline(data)
                                 : data.micro()     ? microHeadline(data)
                                                    : trainHeadline(data, scaling);
  int failed = 0, wrong = 0, skipped = 0, noisy = 0;
  for (const AnalysedPoint& a : data.points) {
    failed += a.record.status == PointStatus::failed;
    wrong += a.record.status == PointStatus::wrong;
    skipped += a.record.status == PointStatus::skipped;
    noisy += !a.summary.warnings.empty();
  }
  std::string status;
  for (const auto& [count, what] :
       {std::pair{failed, "failed"}, std::pair{wrong, "wrong"}, std::pair{skipped, "skipped here"},
        std::pair{noisy, "with noise warnings"}}) {
    if (count) status += (status.empty() ? "" : ", ") + std::to_string(count) + " point(s) " + what;
  }
  if (!status.empty()) out.push_back(status);
  if (out.empty()) out.push_back("nothing was measured");
  return out;
}

}  // namespace synk::harness
