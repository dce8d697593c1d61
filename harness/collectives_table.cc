#include "synk/harness/collectives_table.h"

#include <algorithm>
#include <set>

#include "synk/core/dtype.h"
#include "synk/harness/collective_ops.h"
#include "synk/harness/measure.h"
#include "synk/harness/text_table.h"

namespace synk::harness {
namespace {

std::string axis(const PointRecord& p, const char* name) {
  const auto found = p.axes.find(name);
  return found == p.axes.end() ? "" : found->second;
}

std::vector<std::string> cellText(const CollectiveCell& c) {
  if (!c.present) return {"N/A", "N/A", "N/A", "N/A"};
  if (c.status == "skipped" || c.status == "failed") return {c.status, "", "", ""};
  return {formatFixed(c.time_s * 1e6, 2), formatFixed(c.algbw, 2), formatFixed(c.busbw, 2),
          std::to_string(c.wrong)};
}

}  // namespace

double busbwFactorOf(const std::string& op, int ranks) {
  static const std::map<std::string, Collective> ops = {
      {"all_reduce", Collective::AllReduce}, {"broadcast", Collective::Broadcast},
      {"reduce", Collective::Reduce},        {"all_gather", Collective::AllGather},
      {"gather", Collective::Gather},        {"scatter", Collective::Scatter}};
  const auto found = ops.find(op);
  return found == ops.end() ? 1.0 : busbwFactor(found->second, ranks);
}

std::string ncclTypeName(const std::string& dtype) {
  static const std::map<std::string, std::string> names = {
      {"float32", "float"}, {"float64", "double"}, {"float16", "half"}};
  const auto found = names.find(dtype);
  return found == names.end() ? dtype : found->second;
}

std::vector<CollectiveRow> collectiveRows(const RunData& data) {
  std::vector<CollectiveRow> rows;
  std::map<std::string, size_t> index;  // everything but backend and placement -> row
  for (size_t i = 0; i < data.points.size(); ++i) {
    const PointRecord& p = data.points[i].record;
    const std::string key = axis(p, "op") + "/" + axis(p, "ranks") + "/" + axis(p, "dtype") + "/" +
                            axis(p, "redop") + "/" + axis(p, "root") + "/" + axis(p, "bytes");
    if (!index.count(key)) {
      CollectiveRow row;
      row.op = axis(p, "op");
      row.dtype = axis(p, "dtype");
      row.redop = axis(p, "redop");
      row.root = std::atoi(axis(p, "root").c_str());
      row.ranks = std::atoi(axis(p, "ranks").c_str());
      const CollectiveShape shape = collectiveShape(row.op, std::atoll(axis(p, "bytes").c_str()),
                                                    row.ranks, parseDType(row.dtype));
      row.size = shape.bytes();
      row.count = shape.part;
      index[key] = rows.size();
      rows.push_back(row);
    }
    CollectiveRow& row = rows[index[key]];
    CollectiveCell& cell = row.cells[axis(p, "backend")][axis(p, "placement") == "in" ? 1 : 0];
    cell.present = true;
    cell.status = p.status;
    cell.reason = p.reason;
    cell.wrong = p.wrong;
    cell.time_s = data.slowest_s[i];
    if (cell.time_s > 0) {
      cell.algbw = double(row.size) / cell.time_s * 1e-9;
      cell.busbw = cell.algbw * busbwFactorOf(row.op, row.ranks);
    }
  }
  return rows;
}

void printCollectivesTable(std::FILE* out, const RunData& data) {
  const std::vector<CollectiveRow> rows = collectiveRows(data);
  std::set<std::string> backends;
  for (const CollectiveRow& r : rows) {
    for (const auto& [backend, cells] : r.cells)
      backends.insert(backend);
  }
  std::fprintf(out,
               "# time: median over iterations of the slowest rank's time; GB/s = 1e9 B/s; "
               "busbw = algbw x factor (all_reduce 2(n-1)/n; gathers, scatter (n-1)/n; "
               "broadcast, reduce 1)\n");
  int64_t wrong_total = 0;
  std::map<std::string, std::pair<double, int>> busbw_sum;
  // One table per (op, ranks), in the order they ran.
  std::vector<std::pair<std::string, int>> groups;
  for (const CollectiveRow& r : rows) {
    if (std::find(groups.begin(), groups.end(), std::pair{r.op, r.ranks}) == groups.end())
      groups.push_back({r.op, r.ranks});
  }
  for (const auto& [op, ranks] : groups) {
    std::fprintf(out, "#\n# %s, %d rank(s)%s\n", op.c_str(), ranks,
                 backends.size() > 1 ? ", backends side by side" : "");
    // Columns: nccl-tests' two groups for one backend; side by side, only the variants that
    // ran somewhere in this table (a backend skipped everywhere is left to the footer).
    std::vector<std::pair<std::string, int>> columns;
    for (const std::string& backend : backends) {
      for (int place = 0; place < 2; ++place) {
        bool ran = backends.size() == 1;
        for (const CollectiveRow& r : rows) {
          const auto found = r.cells.find(backend);
          if (r.op == op && r.ranks == ranks && found != r.cells.end() &&
              found->second[place].present && found->second[place].status != "skipped") {
            ran = true;
          }
        }
        if (ran) columns.push_back({backend, place});
      }
    }
    TextTable table;
    for (const char* h : {"size (B)", "count", "type", "redop", "root"})
      table.column(h);
    for (const auto& [backend, place] : columns) {
      const std::string prefix =
          (backends.size() > 1 ? backend + " " : "") + (place ? "in-place" : "out-of-place") + ":";
      for (const char* h : {" time (us)", " algbw", " busbw", " #wrong"})
        table.column(prefix + h);
    }
    for (const CollectiveRow& r : rows) {
      if (r.op != op || r.ranks != ranks) continue;
      std::vector<std::string> cells = {std::to_string(r.size), std::to_string(r.count),
                                        ncclTypeName(r.dtype), r.redop, std::to_string(r.root)};
      for (const auto& [backend, place] : columns) {
        const auto found = r.cells.find(backend);
        const CollectiveCell cell =
            found == r.cells.end() ? CollectiveCell{} : found->second[place];
        for (std::string& text : cellText(cell))
          cells.push_back(std::move(text));
        wrong_total += cell.wrong;
        if (cell.present && cell.busbw > 0) {
          busbw_sum[backend].first += cell.busbw;
          busbw_sum[backend].second += 1;
        }
      }
      table.row(cells);
    }
    table.print(out);
  }
  int failed = 0;
  for (const AnalysedPoint& p : data.points)
    failed += p.record.status == "failed";
  std::fprintf(out, "# Out of bounds values : %lld %s\n", static_cast<long long>(wrong_total),
               wrong_total == 0 && failed == 0 ? "OK" : "FAILED");
  for (const auto& [backend, sum] : busbw_sum) {
    std::fprintf(out, "# Avg bus bandwidth    : %.4f GB/s%s\n", sum.first / sum.second,
                 backends.size() > 1 ? (" (" + backend + ")").c_str() : "");
  }
  // Skips and failures, one line per backend and reason.
  std::map<std::string, int> reasons;
  for (const AnalysedPoint& p : data.points) {
    if (p.record.status == "failed" || p.record.status == "skipped") {
      ++reasons[p.record.status + " (" + axis(p.record, "backend") + "): " + p.record.reason];
    }
  }
  for (const auto& [reason, count] : reasons)
    std::fprintf(out, "# %d point(s) %s\n", count, reason.c_str());
}

}  // namespace synk::harness
