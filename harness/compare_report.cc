#include "synk/harness/compare_report.h"

#include <cmath>

#include "synk/harness/errors.h"
#include "synk/harness/json.h"
#include "synk/harness/svg_plot.h"
#include "synk/harness/text_table.h"

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

bool hasScaling(const RunCompare& c) {
  for (const PointCompare& p : c.points)
    if (p.scaling) return true;
  return false;
}

std::string jsonValues(const std::vector<double>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? "," : "") + jsonNumber(values[i]);
  return out + "]";
}

std::string jsonRun(const RunRecord& r, const std::string& status) {
  return "{\"run\":" + std::to_string(r.id) + ",\"experiment\":" + jsonString(r.experiment) +
         ",\"kind\":" + jsonString(r.kind) + ",\"tag\":" + jsonString(r.tag) +
         ",\"commit\":" + jsonString(r.commit) + ",\"dirty\":" + (r.dirty ? "true" : "false") +
         ",\"status\":" + jsonString(status) + ",\"machine_key\":" + jsonString(r.machine_key) +
         "}";
}

std::string jsonSide(const std::vector<double>& values, double median) {
  return "{\"repetitions\":" + std::to_string(values.size()) +
         ",\"median_s\":" + (values.empty() ? "null" : jsonNumber(median)) +
         ",\"values_s\":" + jsonValues(values) + "}";
}

std::string jsonInterval(const Interval& i) {
  return "[" + jsonNumber(i.low) + "," + jsonNumber(i.high) + "]";
}

std::string jsonPoint(const PointCompare& p) {
  const PointComparison& r = p.result;
  const bool tested = r.test.can_reach_significance && r.verdict != Verdict::Incomparable;
  std::string out = "{\"label\":" + jsonString(p.label) + ",\"axes\":" + toJson(p.axes) +
                    ",\"baseline_key\":" + jsonString(p.baseline_key) +
                    ",\"candidate_key\":" + jsonString(p.candidate_key) +
                    ",\"verdict\":" + jsonString(verdictName(r.verdict)) +
                    ",\"reason\":" + jsonString(r.reason) +
                    ",\"forced\":" + (p.forced ? "true" : "false") +
                    ",\"baseline\":" + jsonSide(p.baseline_values, r.baseline_median) +
                    ",\"candidate\":" + jsonSide(p.candidate_values, r.candidate_median);
  const bool measured = !p.baseline_values.empty() && !p.candidate_values.empty();
  out += ",\"change\":" + (measured ? jsonNumber(r.change) : "null");
  out += ",\"noise\":" + (measured ? jsonNumber(r.noise) : "null");
  out += ",\"threshold\":" + (measured ? jsonNumber(r.threshold) : "null");
  out += ",\"p\":" + (measured ? jsonNumber(r.test.p) : "null");
  out += ",\"p_adjusted\":" + (tested ? jsonNumber(r.p_adjusted) : "null");
  out += std::string(",\"exact\":") + (r.test.exact ? "true" : "false");
  out += ",\"min_p\":" + (measured ? jsonNumber(r.test.min_p) : "null");
  out += std::string(",\"can_reach_significance\":") +
         (r.test.can_reach_significance ? "true" : "false");
  if (!p.scaling) return out + ",\"scaling\":null}";
  const ScalingChange& s = p.scaling->change;
  return out + ",\"scaling\":{\"ranks\":" + std::to_string(p.scaling->ranks) +
         ",\"baseline_speedup\":" + jsonNumber(s.baseline_speedup) +
         ",\"candidate_speedup\":" + jsonNumber(s.candidate_speedup) +
         ",\"speedup_change\":" + jsonNumber(s.speedup_change) +
         ",\"speedup_interval\":" + jsonInterval(s.speedup_interval) +
         ",\"efficiency_change\":" + jsonNumber(s.efficiency_change) +
         ",\"efficiency_interval\":" + jsonInterval(s.efficiency_interval) +
         ",\"verdict\":" + jsonString(verdictName(s.verdict)) + "}}";
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
  TextTable table;
  table.column("point", false);
  for (const char* h : {"baseline", "candidate", "change", "noise", "n", "p (adj)"})
    table.column(h);
  table.column("verdict", false);
  if (scaling) {
    for (const char* h : {"speedup", "speedup change [95% CI]", "efficiency change"})
      table.column(h);
  }
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
    row.push_back(noteText(p));
    table.row(row);
  }
  table.print(out);
  std::fprintf(out, "%s\n", summaryLine(c).c_str());
}

std::string compareJson(const RunCompare& c) {
  const RegressionThresholds& t = c.thresholds;
  std::string out = "{\"schema\":\"synk-bench-compare/1\",\"exit\":" + std::to_string(c.exit_code) +
                    ",\"forced\":" + (c.forced ? "true" : "false") +
                    ",\"incomplete\":" + (c.incomplete ? "true" : "false") +
                    ",\"thresholds\":{\"q\":" + jsonNumber(t.q) +
                    ",\"correction\":" + jsonString(t.strict ? "holm" : "benjamini-hochberg") +
                    ",\"min_change\":" + jsonNumber(t.min_change) +
                    ",\"noise_factor\":" + jsonNumber(t.noise_factor) +
                    ",\"min_repetitions\":" + std::to_string(t.min_repetitions) + "}" +
                    ",\"baseline\":" + jsonRun(c.baseline, c.baseline_status) +
                    ",\"candidate\":" + jsonRun(c.candidate, c.candidate_status) + ",\"notes\":[";
  for (size_t i = 0; i < c.notes.size(); ++i)
    out += (i ? "," : "") + jsonString(c.notes[i]);
  out += "],\"summary\":{\"worse\":" + std::to_string(c.count(Verdict::Worse)) +
         ",\"better\":" + std::to_string(c.count(Verdict::Better)) +
         ",\"same\":" + std::to_string(c.count(Verdict::Same)) +
         ",\"incomparable\":" + std::to_string(c.count(Verdict::Incomparable)) +
         ",\"skipped_in_both\":" + std::to_string(c.skipped_in_both) + "},\"points\":[";
  for (size_t i = 0; i < c.points.size(); ++i)
    out += (i ? "," : "") + jsonPoint(c.points[i]);
  return out + "]}\n";
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
