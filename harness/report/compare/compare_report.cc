#include "synk/harness/report/compare/compare_report.h"

#include <cmath>

#include "synk/harness/base/errors.h"
#include "synk/harness/base/json.h"
#include "synk/harness/base/text_table.h"
#include "synk/harness/report/html/svg_plot.h"

namespace synk::harness {
namespace {

std::string percent(double fraction, bool sign) {
  if (!std::isfinite(fraction)) return "-";
  return (sign && fraction >= 0 ? "+" : "") + formatFixed(fraction * 100, 1) + " %";
}

std::string runLine(const char* side, const RunRecord& r, const std::string& status) {
  return std::string(side) + " run " + std::to_string(r.id) + " (" + r.experiment +
         (r.tag.empty() ? "" : ", tag " + r.tag) + ", commit " + r.commit.substr(0, 10) +
         (r.dirty ? "+dirty" : "") + ", " + r.started_at + ", " + status + ")";
}

std::string ruleLine(const RegressionThresholds& t) {
  return std::string("worse or better: ") + (t.strict ? "Holm" : "Benjamini-Hochberg") +
         "-adjusted Mann-Whitney p <= " + formatFixed(t.q, 3) + " and a change beyond max(" +
         percent(t.min_change, false) + ", " + formatFixed(t.noise_factor, 1) +
         " x the baseline's noise); fewer than " + std::to_string(t.min_repetitions) +
         " repetitions a side cannot reach significance";
}

std::string pText(const PointCompare& p) {
  if (p.result.verdict == Verdict::Incomparable) return "-";
  return p.result.p_adjusted < 0.001 ? "<0.001" : formatFixed(p.result.p_adjusted, 3);
}

std::string speedupText(const PointCompare& p) {
  if (!p.scaling) return "";
  const ScalingChange& s = p.scaling->change;
  return formatFixed(s.baseline_speedup, 2) + " -> " + formatFixed(s.candidate_speedup, 2);
}

std::string speedupChangeText(const PointCompare& p) {
  if (!p.scaling) return "";
  const ScalingChange& s = p.scaling->change;
  return (s.speedup_change >= 0 ? "+" : "") + formatFixed(s.speedup_change, 2) + " [" +
         formatFixed(s.speedup_interval.low, 2) + ", " + formatFixed(s.speedup_interval.high, 2) +
         "]" + (s.verdict == Verdict::Same ? "" : std::string(" ") + verdictName(s.verdict));
}

std::string efficiencyChangeText(const PointCompare& p) {
  if (!p.scaling) return "";
  const ScalingChange& s = p.scaling->change;
  return (s.efficiency_change >= 0 ? "+" : "") + formatFixed(s.efficiency_change * 100, 1) +
         " pts [" + formatFixed(s.efficiency_interval.low * 100, 1) + ", " +
         formatFixed(s.efficiency_interval.high * 100, 1) + "]";
}

std::string noteText(const PointCompare& p) {
  std::string note = p.result.reason;
  if (p.forced) note = "forced: keys differ" + (note.empty() ? "" : "; " + note);
  return note;
}

std::string medianText(const std::vector<double>& values, double median) {
  return values.empty() ? "-" : formatSeconds(median);
}

bool hasEnergy(const RunCompare& c) {
  for (const PointCompare& p : c.points)
    if (p.baseline_joules_per_sample || p.candidate_joules_per_sample) return true;
  return false;
}

// "1.2 mJ -> 1.1 mJ (-8.3 %)": joules per sample of both runs, where measured.
std::string energyText(const PointCompare& p) {
  auto joules = [](const std::optional<double>& j) {
    if (!j) return std::string("-");
    return *j >= 1 ? formatFixed(*j, 2) + " J" : formatFixed(*j * 1e3, 3) + " mJ";
  };
  std::string out =
      joules(p.baseline_joules_per_sample) + " -> " + joules(p.candidate_joules_per_sample);
  if (p.baseline_joules_per_sample && p.candidate_joules_per_sample) {
    out += " (" +
           percent(*p.candidate_joules_per_sample / *p.baseline_joules_per_sample - 1, true) + ")";
  }
  return out;
}

bool hasScaling(const RunCompare& c) {
  for (const PointCompare& p : c.points)
    if (p.scaling) return true;
  return false;
}

OrderedJson jsonValues(const std::vector<double>& values) {
  OrderedJson out = OrderedJson::array();
  for (double v : values)
    out.push_back(jsonNumber(v));
  return out;
}

OrderedJson jsonRun(const RunRecord& r, const std::string& status) {
  return {{"run", r.id},      {"experiment", r.experiment},  {"kind", r.kind},
          {"tag", r.tag},     {"commit", r.commit},          {"dirty", r.dirty},
          {"status", status}, {"machine_key", r.machine_key}};
}

OrderedJson jsonSide(const std::vector<double>& values, double median) {
  return {{"repetitions", values.size()},
          {"median_s", values.empty() ? OrderedJson(nullptr) : jsonNumber(median)},
          {"values_s", jsonValues(values)}};
}

OrderedJson jsonInterval(const Interval& i) {
  return OrderedJson::array({jsonNumber(i.low), jsonNumber(i.high)});
}

OrderedJson jsonPoint(const PointCompare& p) {
  const PointComparison& r = p.result;
  const bool tested = r.test.can_reach_significance && r.verdict != Verdict::Incomparable;
  const bool measured = !p.baseline_values.empty() && !p.candidate_values.empty();
  auto measuredNumber = [&](double v) { return measured ? jsonNumber(v) : OrderedJson(nullptr); };
  OrderedJson out = {{"label", p.label},
                     {"axes", p.axes},
                     {"baseline_key", p.baseline_key},
                     {"candidate_key", p.candidate_key},
                     {"verdict", verdictName(r.verdict)},
                     {"reason", r.reason},
                     {"forced", p.forced},
                     {"baseline", jsonSide(p.baseline_values, r.baseline_median)},
                     {"candidate", jsonSide(p.candidate_values, r.candidate_median)},
                     {"change", measuredNumber(r.change)},
                     {"noise", measuredNumber(r.noise)},
                     {"threshold", measuredNumber(r.threshold)},
                     {"p", measuredNumber(r.test.p)},
                     {"p_adjusted", tested ? jsonNumber(r.p_adjusted) : OrderedJson(nullptr)},
                     {"exact", r.test.exact},
                     {"min_p", measuredNumber(r.test.min_p)},
                     {"can_reach_significance", r.test.can_reach_significance},
                     {"baseline_joules_per_sample", p.baseline_joules_per_sample
                                                        ? jsonNumber(*p.baseline_joules_per_sample)
                                                        : OrderedJson(nullptr)},
                     {"candidate_joules_per_sample",
                      p.candidate_joules_per_sample ? jsonNumber(*p.candidate_joules_per_sample)
                                                    : OrderedJson(nullptr)}};
  if (!p.scaling) {
    out["scaling"] = nullptr;
    return out;
  }
  const ScalingChange& s = p.scaling->change;
  out["scaling"] = {{"ranks", p.scaling->ranks},
                    {"baseline_speedup", jsonNumber(s.baseline_speedup)},
                    {"candidate_speedup", jsonNumber(s.candidate_speedup)},
                    {"speedup_change", jsonNumber(s.speedup_change)},
                    {"speedup_interval", jsonInterval(s.speedup_interval)},
                    {"efficiency_change", jsonNumber(s.efficiency_change)},
                    {"efficiency_interval", jsonInterval(s.efficiency_interval)},
                    {"verdict", verdictName(s.verdict)}};
  return out;
}

std::string summaryLine(const RunCompare& c) {
  return std::to_string(c.points.size()) + " point(s): " + std::to_string(c.count(Verdict::Worse)) +
         " worse, " + std::to_string(c.count(Verdict::Better)) + " better, " +
         std::to_string(c.count(Verdict::Same)) + " same, " +
         std::to_string(c.count(Verdict::Incomparable)) + " incomparable -> exit " +
         std::to_string(c.exit_code) + " (" + exitMeaning(c.exit_code) + ")";
}

}  // namespace

std::string exitMeaning(int exit_code) {
  switch (exit_code) {
    case kExitOk:
      return "no regression";
    case kExitRegression:
      return "regression";
    case kExitRunFailed:
      return "incomplete or incomparable";
    default:
      return "bad input";
  }
}

void printCompare(std::FILE* out, const RunCompare& c) {
  std::fprintf(out, "%s\n%s\n%s\n", runLine("baseline ", c.baseline, c.baseline_status).c_str(),
               runLine("candidate", c.candidate, c.candidate_status).c_str(),
               ruleLine(c.thresholds).c_str());
  for (const std::string& note : c.notes)
    std::fprintf(out, "note: %s\n", note.c_str());
  const bool scaling = hasScaling(c);
  const bool energy = hasEnergy(c);
  TextTable table;
  table.column("point", false);
  for (const char* h : {"baseline", "candidate", "change", "noise", "n", "p (adj)"})
    table.column(h);
  table.column("verdict", false);
  if (scaling) {
    for (const char* h : {"speedup", "speedup change [95% CI]", "efficiency change"})
      table.column(h);
  }
  if (energy) table.column("energy per sample");
  table.column("note", false);
  for (const PointCompare& p : c.points) {
    const PointComparison& r = p.result;
    const bool measured = !p.baseline_values.empty() && !p.candidate_values.empty();
    std::vector<std::string> row = {
        p.label,
        medianText(p.baseline_values, r.baseline_median),
        medianText(p.candidate_values, r.candidate_median),
        measured ? percent(r.change, true) : "-",
        measured ? percent(r.noise, false) : "-",
        std::to_string(p.baseline_values.size()) + "/" + std::to_string(p.candidate_values.size()),
        pText(p),
        verdictName(r.verdict)};
    if (scaling) {
      row.push_back(speedupText(p));
      row.push_back(speedupChangeText(p));
      row.push_back(efficiencyChangeText(p));
    }
    if (energy) row.push_back(energyText(p));
    row.push_back(noteText(p));
    table.row(row);
  }
  table.print(out);
  std::fprintf(out, "%s\n", summaryLine(c).c_str());
}

std::string compareJson(const RunCompare& c) {
  const RegressionThresholds& t = c.thresholds;
  OrderedJson points = OrderedJson::array();
  for (const PointCompare& p : c.points)
    points.push_back(jsonPoint(p));
  const OrderedJson out = {{"schema", "synk-bench-compare/1"},
                           {"exit", c.exit_code},
                           {"forced", c.forced},
                           {"incomplete", c.incomplete},
                           {"thresholds",
                            {{"q", jsonNumber(t.q)},
                             {"correction", t.strict ? "holm" : "benjamini-hochberg"},
                             {"min_change", jsonNumber(t.min_change)},
                             {"noise_factor", jsonNumber(t.noise_factor)},
                             {"min_repetitions", t.min_repetitions}}},
                           {"baseline", jsonRun(c.baseline, c.baseline_status)},
                           {"candidate", jsonRun(c.candidate, c.candidate_status)},
                           {"notes", c.notes},
                           {"summary",
                            {{"worse", c.count(Verdict::Worse)},
                             {"better", c.count(Verdict::Better)},
                             {"same", c.count(Verdict::Same)},
                             {"incomparable", c.count(Verdict::Incomparable)},
                             {"skipped_in_both", c.skipped_in_both}}},
                           {"points", std::move(points)}};
  return out.dump() + "\n";
}

std::string compareHtmlSection(const RunCompare& c) {
  auto cell = [](const std::string& text, bool left = false) {
    return std::string(left ? "<td class=\"l\">" : "<td>") + htmlEscape(text) + "</td>";
  };
  std::string out = "<section id=\"compare\"><h2>Compared with run " +
                    std::to_string(c.baseline.id) + "</h2><p>" +
                    htmlEscape(runLine("baseline", c.baseline, c.baseline_status)) + "<br>" +
                    htmlEscape(runLine("candidate", c.candidate, c.candidate_status)) + "</p>" +
                    "<p class=\"note\">" + htmlEscape(ruleLine(c.thresholds)) + "</p>";
  for (const std::string& note : c.notes)
    out += "<p class=\"note\">" + htmlEscape(note) + "</p>";
  const bool scaling = hasScaling(c);
  out +=
      "<table><tr><th class=\"l\">point</th><th>baseline</th><th>candidate</th>"
      "<th>change</th><th>noise</th><th>n</th><th>p (adj)</th><th class=\"l\">verdict</th>";
  if (scaling) out += "<th>speedup</th><th>speedup change [95% CI]</th><th>efficiency change</th>";
  out += "<th class=\"l\">note</th></tr>";
  for (const PointCompare& p : c.points) {
    const PointComparison& r = p.result;
    const bool measured = !p.baseline_values.empty() && !p.candidate_values.empty();
    out += std::string("<tr class=\"") + verdictName(r.verdict) + "\">" + cell(p.label, true) +
           cell(medianText(p.baseline_values, r.baseline_median)) +
           cell(medianText(p.candidate_values, r.candidate_median)) +
           cell(measured ? percent(r.change, true) : "-") +
           cell(measured ? percent(r.noise, false) : "-") +
           cell(std::to_string(p.baseline_values.size()) + "/" +
                std::to_string(p.candidate_values.size())) +
           cell(pText(p)) + cell(verdictName(r.verdict), true);
    if (scaling)
      out += cell(speedupText(p)) + cell(speedupChangeText(p)) + cell(efficiencyChangeText(p));
    out += cell(noteText(p), true) + "</tr>";
  }
  return out + "</table><p><b>" + htmlEscape(summaryLine(c)) + "</b></p></section>";
}

}  // namespace synk::harness
