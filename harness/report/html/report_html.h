#pragma once
// The HTML report of a run: one self-contained page (inline CSS and SVG, a few lines of inline
// script that only check the plots drew; a Content-Security-Policy forbids any network access).
// It leads with the answer (headline.h: efficiency and speedup at the most ranks, NCCL against
// host staging, busbw per backend), then the noise warnings, then the run's context folded
// away; every plot is the page's width and shows the spread (whiskers).
//   train runs:       speedup vs ranks with the ideal line and 95 % whiskers, efficiency,
//                     samples/s vs batch, the step's time split (compute / collectives), the
//                     session start-up cost, and the scaling table
//   collectives runs: busbw and time vs message size with every backend side by side, and the
//                     table
//   micro runs:       the table of benchmarks (median time per iteration over repetitions)
#include <string>

#include "synk/harness/analysis/report_data.h"
#include "synk/harness/config/config.h"

namespace synk::harness {

// `sections`: more HTML appended to the page (a compare, a history).
std::string renderHtmlReport(const RunData& data, Scaling scaling,
                             const std::string& sections = "");
// Throws BadInput when the file cannot be written.
void writeHtmlReport(const std::string& path, const RunData& data, Scaling scaling,
                     const std::string& sections = "");

// The pieces, for pages that hold more than one report (site.h): a whole self-contained page
// around `body`; a run's report without its page (headline, warnings, context, plots, table);
// its title ("synk-bench run 3: quickstart").
std::string htmlPage(const std::string& title, const std::string& body);
std::string reportBody(const RunData& data, Scaling scaling);
std::string reportTitle(const RunData& data);
// Writes `text` to `path`; throws BadInput when it cannot.
void writeTextFile(const std::string& path, const std::string& text);

}  // namespace synk::harness
