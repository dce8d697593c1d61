#pragma once
// `synk-bench site DIR`: a static site over a whole database, every page self-contained like the
// report (inline CSS and SVG, no network, relative links only), so DIR can be opened from the
// file system, copied, or served by any static host:
//   index.html              every experiment with its newest run's headline, every run, the
//                           baselines;
//   experiment-NAME.html    its runs, its newest run compared with the one before and with each
//                           baseline of it, its history per point (medians per commit, change
//                           points);
//   run-ID.html             the run's report, compared with the previous run of its experiment.
// Existing files of those names are replaced; nothing else in DIR is touched.
#include <string>

#include "synk/harness/store/store.h"

namespace synk::harness {

struct SiteSummary {
  int runs = 0, experiments = 0, pages = 0;
};

// Throws BadInput when DIR cannot be made or written.
SiteSummary writeSite(const Store& store, const std::string& dir);

// "quickstart" -> "quickstart", "my model/v2" -> "my_model_v2": a file-name-safe name.
std::string siteSlug(const std::string& name);

}  // namespace synk::harness
