#include "synk/harness/report/text/collectives_table.h"

#include <algorithm>
#include <set>

#include "synk/core/dtype.h"
#include "synk/harness/base/text_table.h"
#include "synk/harness/stats/measure.h"

namespace synk::harness {
namespace {

std::string axis(const PointRecord& p, const char* name) {
  const auto found = p.axes.find(name);
  return found == p.axes.end() ? "" : found->second;
}

}  // namespace

std::optional<Collective> collectiveOf(const PointRecord& p) {
  return parseCollective(axis(p, "op"));
}

double busbwFactorOf(const std::optional<Collective>& op, int ranks) {
  return op ? busbwFactor(*op, ranks) : 1.0;
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
      row.collective = collectiveOf(p);
      row.dtype = axis(p, "dtype");
      row.redop = axis(p, "redop");
      row.root = std::atoi(axis(p, "root").c_str());
      row.ranks = std::atoi(axis(p, "ranks").c_str());
      const CollectiveShape shape =
          collectiveShape(row.collective.value_or(Collective::AllReduce),
                          std::atoll(axis(p, "bytes").c_str()), row.ranks, parseDType(row.dtype));
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
    cell.time_min_s = data.points[i].summary.spread.min;
    cell.time_max_s = data.points[i].summary.spread.max;
    if (cell.time_s > 0) {
      cell.algbw = double(row.size) / cell.time_s * 1e-9;
      cell.busbw = cell.algbw * busbwFactorOf(row.collective, row.ranks);
    }
  }
  return rows;
}

namespace {

// nccl-tests' getFloatStr: the value in `width` characters, with as many decimals as fit.
std::string fitted(double value, int width) {
  char text[32];
  for (const char* format : {"%*.2f", "%*.1f", "%*.0f"}) {
    if (std::snprintf(text, sizeof text, format, width, value) <= width) return text;
  }
  std::snprintf(text, sizeof text, width >= 7 ? "%*.1e" : "%*.0e", width, value);
  return text;
}

// A setting of the run's resolved configuration ("experiment.steps" -> "20"), "" if absent.
std::string setting(const RunRecord& run, const std::string& key) {
  const std::string prefix = key + " = ";
  const size_t at = run.config_resolved.find(prefix);
  if (at == std::string::npos || (at > 0 && run.config_resolved[at - 1] != '\n')) return "";
  const size_t begin = at + prefix.size();
  return run.config_resolved.substr(begin, run.config_resolved.find('\n', begin) - begin);
}

struct Block {
  std::string backend, op;
  int ranks = 0;
  std::vector<const CollectiveRow*> rows;
};

// One nccl-tests group: "  time  algbw  busbw  #wrong", or N/A where it did not run.
std::string cellText(const CollectiveCell& c, bool checked) {
  char text[64];
  if (!c.present || c.status == PointStatus::failed || c.status == PointStatus::skipped ||
      c.time_s <= 0) {
    std::snprintf(text, sizeof text, "  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
  } else if (checked) {
    std::snprintf(text, sizeof text, "  %7s  %6s  %6s  %6lld", fitted(c.time_s * 1e6, 7).c_str(),
                  fitted(c.algbw, 6).c_str(), fitted(c.busbw, 6).c_str(),
                  static_cast<long long>(c.wrong));
  } else {
    std::snprintf(text, sizeof text, "  %7s  %6s  %6s  %6s", fitted(c.time_s * 1e6, 7).c_str(),
                  fitted(c.algbw, 6).c_str(), fitted(c.busbw, 6).c_str(), "N/A");
  }
  return text;
}

void printBlock(std::FILE* out, const RunData& data, const Block& block) {
  const RunRecord& run = data.run;
  const std::string timing = setting(run, "experiment.timing");
  const bool checked = setting(run, "experiment.check") != "0";
  int64_t min_bytes = -1, max_bytes = 0;
  for (const CollectiveRow* r : block.rows) {
    min_bytes = min_bytes < 0 ? r->size : std::min(min_bytes, r->size);
    max_bytes = std::max(max_bytes, r->size);
  }
  std::fprintf(out, "# synk-bench collectives: %s on %s, %d rank(s), one process each\n",
               block.op.c_str(), block.backend.c_str(), block.ranks);
  std::fprintf(out,
               "# nRanks %d minBytes %lld maxBytes %lld warmup iters: %s iters: %s validation: "
               "%s timing: %s\n",
               block.ranks, static_cast<long long>(std::max<int64_t>(0, min_bytes)),
               static_cast<long long>(max_bytes), setting(run, "experiment.warmup").c_str(),
               setting(run, "experiment.steps").c_str(), setting(run, "experiment.check").c_str(),
               timing == "iteration"
                   ? "per iteration (each synchronised; time = median of the slowest rank's)"
                   : "back to back (one synchronisation; time = mean per iteration, slowest rank)");
  if (setting(run, "experiment.blocking") == "true") {
    std::fprintf(out,
                 "# Blocking Enabled: a barrier and a synchronisation around each iteration\n");
  }
  std::fprintf(out, "#\n");
  std::fprintf(out,
               "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place  "
               "        \n",
               "", "", "", "", "");
  std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size",
               "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
               "algbw", "busbw", "#wrong");
  std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)",
               "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
               "");
  int64_t wrong = 0;
  double busbw_sum = 0;
  int busbw_count = 0;
  std::vector<std::string> problems;
  for (const CollectiveRow* r : block.rows) {
    const auto& cells = r->cells.at(block.backend);
    std::fprintf(out, "%12lld  %12zu  %8s  %6s  %6d", static_cast<long long>(r->size), r->count,
                 ncclTypeName(r->dtype).c_str(), r->redop.c_str(), r->root);
    for (int place = 0; place < 2; ++place) {
      const CollectiveCell& c = cells[place];
      std::fprintf(out, "%s", cellText(c, checked).c_str());
      wrong += c.wrong;
      if (c.present && c.status != PointStatus::failed && c.status != PointStatus::skipped &&
          c.time_s > 0) {
        busbw_sum += c.busbw;
        ++busbw_count;
      }
      if (c.present && (c.status == PointStatus::failed || c.status == PointStatus::wrong)) {
        problems.push_back(std::to_string(r->size) + " B " + (place ? "in place" : "out of place") +
                           ": " + toString(c.status) + ": " + c.reason);
      }
    }
    std::fprintf(out, "\n");
  }
  for (const std::string& problem : problems)
    std::fprintf(out, "# %s\n", problem.c_str());
  std::fprintf(out, "# %-20s : %lld %s\n", "Out of bounds values", static_cast<long long>(wrong),
               wrong == 0 && problems.empty() ? "OK" : "FAILED");
  std::fprintf(out, "# %-20s : %g \n", "Avg bus bandwidth",
               busbw_count ? busbw_sum / busbw_count : 0.0);
  std::fprintf(out, "#\n");
}

// Several backends: the in-place busbw of each, side by side per size, and the first backend's
// over each other's (is NCCL worth it here?). Every line starts with '#'.
void printSideBySide(std::FILE* out, const std::vector<CollectiveRow>& rows,
                     const std::vector<std::string>& backends) {
  std::vector<std::pair<std::string, int>> groups;
  for (const CollectiveRow& r : rows)
    if (std::find(groups.begin(), groups.end(), std::pair{r.op, r.ranks}) == groups.end())
      groups.push_back({r.op, r.ranks});
  for (const auto& [op, ranks] : groups) {
    std::fprintf(out, "# busbw (GB/s) side by side: %s, %d rank(s), in place where measured\n",
                 op.c_str(), ranks);
    auto column = [](const std::string& text) {
      char cell[64];
      std::snprintf(cell, sizeof cell, "  %10s", text.c_str());
      return std::string(cell);
    };
    std::string header = "# " + std::string("      size");
    for (const std::string& b : backends)
      header += column(b);
    for (size_t i = 1; i < backends.size(); ++i)
      header += column(backends[0] + "/" + backends[i]);
    std::fprintf(out, "%s\n", header.c_str());
    for (const CollectiveRow& r : rows) {
      if (r.op != op || r.ranks != ranks) continue;
      std::vector<double> busbw;
      char size[32];
      std::snprintf(size, sizeof size, "# %10lld", static_cast<long long>(r.size));
      std::string line = size;
      for (const std::string& b : backends) {
        double v = 0;
        const auto found = r.cells.find(b);
        if (found != r.cells.end()) {
          for (int place : {1, 0}) {
            const CollectiveCell& c = found->second[place];
            if (c.present && c.status == PointStatus::ok && c.busbw > 0) {
              v = c.busbw;
              break;
            }
          }
        }
        busbw.push_back(v);
        line += column(v > 0 ? fitted(v, 10) : "N/A");
      }
      for (size_t i = 1; i < backends.size(); ++i)
        line += column(busbw[0] > 0 && busbw[i] > 0 ? fitted(busbw[0] / busbw[i], 9) + "x" : "N/A");
      std::fprintf(out, "%s\n", line.c_str());
    }
    std::fprintf(out, "#\n");
  }
}

}  // namespace

void printCollectivesTable(std::FILE* out, const RunData& data) {
  const std::vector<CollectiveRow> rows = collectiveRows(data);
  std::fprintf(out,
               "# busbw = algbw x factor: all_reduce 2(n-1)/n; all_gather, gather, scatter "
               "(n-1)/n; broadcast, reduce 1. GB/s = 1e9 B/s\n#\n");
  // One nccl-tests block per backend, op and rank count, in the order they ran; a backend whose
  // points were all skipped (no GPU here) gets one line saying why.
  std::vector<Block> blocks;
  std::vector<std::string> backends;
  for (const AnalysedPoint& p : data.points) {
    const std::string backend = p.record.axes.count("backend") ? p.record.axes.at("backend") : "";
    if (std::find(backends.begin(), backends.end(), backend) == backends.end())
      backends.push_back(backend);
  }
  std::vector<std::string> measured;
  for (const std::string& backend : backends) {
    for (const CollectiveRow& r : rows) {
      const auto found = r.cells.find(backend);
      if (found == r.cells.end()) continue;
      const bool ran = std::any_of(found->second.begin(), found->second.end(), [](const auto& c) {
        return c.present && c.status != PointStatus::skipped;
      });
      if (!ran) continue;
      if (std::find(measured.begin(), measured.end(), backend) == measured.end())
        measured.push_back(backend);
      auto block = std::find_if(blocks.begin(), blocks.end(), [&](const Block& b) {
        return b.backend == backend && b.op == r.op && b.ranks == r.ranks;
      });
      if (block == blocks.end()) {
        blocks.push_back({backend, r.op, r.ranks, {}});
        block = blocks.end() - 1;
      }
      block->rows.push_back(&r);
    }
  }
  for (const Block& block : blocks)
    printBlock(out, data, block);
  if (measured.size() > 1) printSideBySide(out, rows, measured);
  // Skips, one line per backend and reason.
  std::map<std::string, int> reasons;
  for (const AnalysedPoint& p : data.points) {
    if (p.record.status == PointStatus::skipped) {
      ++reasons[axis(p.record, "backend") + ": " + p.record.reason];
    }
  }
  for (const auto& [reason, count] : reasons)
    std::fprintf(out, "# %d point(s) skipped (%s)\n", count, reason.c_str());
}

}  // namespace synk::harness
