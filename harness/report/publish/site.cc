#include "synk/harness/report/publish/site.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "synk/harness/analysis/compare.h"
#include "synk/harness/analysis/history.h"
#include "synk/harness/analysis/report_data.h"
#include "synk/harness/base/errors.h"
#include "synk/harness/report/compare/compare_report.h"
#include "synk/harness/report/compare/history_report.h"
#include "synk/harness/report/html/report_html.h"
#include "synk/harness/report/html/svg_plot.h"
#include "synk/harness/report/text/headline.h"

namespace synk::harness {
namespace {

std::string runPage(int64_t id) {
  return "run-" + std::to_string(id) + ".html";
}

std::string experimentPage(const std::string& experiment) {
  return "experiment-" + siteSlug(experiment) + ".html";
}

std::string link(const std::string& href, const std::string& text) {
  return "<a href=\"" + htmlEscape(href) + "\">" + htmlEscape(text) + "</a>";
}

std::string nav(const std::string& experiment = "") {
  std::string out = "<p class=\"note\">" + link("index.html", "all runs");
  if (!experiment.empty()) out += " · " + link(experimentPage(experiment), experiment);
  return out + "</p>";
}

std::string runRow(const RunRecord& r, const std::string& headline) {
  return "<tr><td>" + link(runPage(r.id), std::to_string(r.id)) + "</td><td class=\"l\">" +
         htmlEscape(r.started_at) + "</td><td class=\"l\">" + htmlEscape(effectiveStatus(r)) +
         "</td><td class=\"l\">" + link(experimentPage(r.experiment), r.experiment) +
         "</td><td class=\"l\">" + htmlEscape(r.kind) + "</td><td class=\"l\">" +
         htmlEscape(r.tag) + "</td><td class=\"l\">" +
         htmlEscape(r.commit.substr(0, 10) + (r.dirty ? "+dirty" : "")) + "</td><td class=\"l\">" +
         htmlEscape(headline) + "</td></tr>";
}

const char* kRunHeader =
    "<table><tr><th>run</th><th class=\"l\">started</th><th class=\"l\">status</th>"
    "<th class=\"l\">experiment</th><th class=\"l\">kind</th><th class=\"l\">tag</th>"
    "<th class=\"l\">commit</th><th class=\"l\">headline</th></tr>";

// A compare section, or a note saying why there is none.
std::string compareOrNote(const Store& store, int64_t baseline, int64_t candidate,
                          const std::string& what) {
  try {
    return "<h2>" + htmlEscape(what) + "</h2>" +
           compareHtmlSection(compareRuns(store, baseline, candidate, {}));
  } catch (const std::exception& e) {
    return "<p class=\"note\">" + htmlEscape(what) + ": " + htmlEscape(e.what()) + "</p>";
  }
}

}  // namespace

std::string siteSlug(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.';
    out += safe ? c : '_';
  }
  return out.empty() ? "_" : out;
}

SiteSummary writeSite(const Store& store, const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw BadInput("cannot make the site's folder " + dir + ": " + error.message());
  SiteSummary summary;
  const std::vector<RunRecord> runs = store.runs();  // newest first
  std::map<std::string, std::vector<const RunRecord*>> by_experiment;
  for (const RunRecord& r : runs)
    by_experiment[r.experiment].push_back(&r);
  std::map<int64_t, std::string> headlines;  // run -> its headline's first line

  // Run pages, each compared with the previous run of its experiment.
  for (const auto& [experiment, list] : by_experiment) {
    for (size_t i = 0; i < list.size(); ++i) {
      const RunRecord& r = *list[i];
      const RunData data = loadRun(store, r.id);
      const Scaling scaling = runScaling(data.run);
      const std::vector<std::string> lines = headline(data, scaling);
      headlines[r.id] = lines.empty() ? "" : lines.front();
      std::string sections;
      if (i + 1 < list.size()) {
        sections =
            compareOrNote(store, list[i + 1]->id, r.id,
                          "Compared with the previous run, " + std::to_string(list[i + 1]->id));
      }
      const std::string title = reportTitle(data);
      writeTextFile(dir + "/" + runPage(r.id),
                    htmlPage(title, nav(experiment) + "<h1>" + htmlEscape(title) + "</h1>" +
                                        reportBody(data, scaling) + sections));
      ++summary.pages;
      ++summary.runs;
    }
  }
  // Experiment pages: runs, compares of the newest run, history.
  const std::map<std::string, int64_t> baselines = store.baselines();
  for (const auto& [experiment, list] : by_experiment) {
    const RunRecord& newest = *list.front();
    std::string body = nav() + "<h1>Experiment " + htmlEscape(experiment) + "</h1>";
    body += "<div class=\"headline\"><p>" + htmlEscape(headlines[newest.id]) + " (newest run, " +
            link(runPage(newest.id), std::to_string(newest.id)) + ")</p></div>";
    body += "<h2>Runs</h2>" + std::string(kRunHeader);
    for (const RunRecord* r : list)
      body += runRow(*r, headlines[r->id]);
    body += "</table>";
    if (list.size() > 1) {
      body += compareOrNote(store, list[1]->id, newest.id,
                            "Newest run " + std::to_string(newest.id) + " against run " +
                                std::to_string(list[1]->id));
    }
    for (const auto& [name, run] : baselines) {
      const auto found =
          std::find_if(list.begin(), list.end(), [&](const RunRecord* r) { return r->id == run; });
      if (found == list.end() || run == newest.id) continue;
      body += compareOrNote(store, run, newest.id,
                            "Newest run " + std::to_string(newest.id) + " against baseline '" +
                                name + "' (run " + std::to_string(run) + ")");
    }
    try {
      body += historyHtmlSection(loadHistory(store, experiment));
    } catch (const std::exception& e) {
      body += "<p class=\"note\">history: " + htmlEscape(e.what()) + "</p>";
    }
    writeTextFile(dir + "/" + experimentPage(experiment),
                  htmlPage("synk-bench experiment " + experiment, body));
    ++summary.pages;
    ++summary.experiments;
  }
  // The index.
  std::string body = "<h1>synk-bench results</h1><p class=\"note\">" + htmlEscape(store.path()) +
                     ": " + std::to_string(runs.size()) + " run(s) of " +
                     std::to_string(by_experiment.size()) + " experiment(s)</p>";
  body += "<h2>Experiments</h2><div class=\"headline\">";
  for (const auto& [experiment, list] : by_experiment) {
    body += "<p>" + link(experimentPage(experiment), experiment) + ": " +
            htmlEscape(headlines[list.front()->id]) + "</p>";
  }
  body += "</div><h2>Runs</h2>" + std::string(kRunHeader);
  for (const RunRecord& r : runs)
    body += runRow(r, headlines[r.id]);
  body += "</table>";
  if (!baselines.empty()) {
    body += "<h2>Baselines</h2><table><tr><th class=\"l\">name</th><th>run</th></tr>";
    for (const auto& [name, run] : baselines)
      body += "<tr><td class=\"l\">" + htmlEscape(name) + "</td><td>" +
              link(runPage(run), std::to_string(run)) + "</td></tr>";
    body += "</table>";
  }
  writeTextFile(dir + "/index.html", htmlPage("synk-bench results", body));
  ++summary.pages;
  return summary;
}

}  // namespace synk::harness
