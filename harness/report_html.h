#pragma once
// The HTML report of a run: one self-contained page (inline CSS and SVG, a few lines of inline
// script that only check the plots drew; a Content-Security-Policy forbids any network access).
//   train runs:       speedup vs ranks with the ideal line and 95 % whiskers, efficiency,
//                     samples/s vs batch, the step's time split (compute / collectives), the
//                     session start-up cost, and the scaling table
//   collectives runs: busbw vs message size with every backend side by side, and the table
//   micro runs:       the table of benchmarks (median time per iteration over repetitions)
#include <string>

#include "synk/harness/config.h"
#include "synk/harness/report_data.h"

namespace synk::harness {

// `sections`: more HTML appended to the page (a compare, a history).
std::string renderHtmlReport(const RunData& data, Scaling scaling,
                             const std::string& sections = "");
// Throws BadInput when the file cannot be written.
void writeHtmlReport(const std::string& path, const RunData& data, Scaling scaling,
                     const std::string& sections = "");

}  // namespace synk::harness
