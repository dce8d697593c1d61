// `synk-bench site DIR` (harness/site.h): every page written, self-contained, and every link
// between them leads to a page that exists. (html_report_test.sh loads them in a browser.)
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "synk/harness/report/publish/site.h"
#include "tests/harness/synthetic_store.h"
#include "tests/harness/temp_dir.h"

using namespace synk::harness;
using namespace synk::harness::test;

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

SyntheticPoint point(const std::string& ranks, double seconds) {
  return {{{"backend", "cpu"}, {"batch", "32"}, {"ranks", ranks}}, std::vector<double>(5, seconds)};
}

}  // namespace

TEST_CASE("site: index, experiments and runs, self-contained and linked", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"), Store::Mode::Write);
  const int64_t first =
      storeRun(store, syntheticRun("toy", "c1", "t1"), {point("1", 1e-3), point("2", 0.6e-3)});
  storeRun(store, syntheticRun("toy", "c2", "t2"), {point("1", 1e-3), point("2", 0.7e-3)});
  storeRun(store, syntheticRun("my model/v2", "c2", "t3"), {point("1", 2e-3)});
  store.setBaseline("release", first);
  const std::string site = dir.file("site");
  const SiteSummary summary = writeSite(store, site);
  CHECK(summary.runs == 3);
  CHECK(summary.experiments == 2);
  CHECK(summary.pages == 6);
  for (const char* page : {"index.html", "run-1.html", "run-2.html", "run-3.html",
                           "experiment-toy.html", "experiment-my_model_v2.html"}) {
    INFO(page);
    const std::string html = slurp(std::filesystem::path(site) / page);
    REQUIRE_FALSE(html.empty());
    CHECK_THAT(html, Catch::Contains("Content-Security-Policy"));
    CHECK_THAT(html, !Catch::Contains("http://") && !Catch::Contains("https://"));
    // Every relative link resolves to a page of the site.
    const std::regex href("href=\"([^\"]+)\"");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), href);
         it != std::sregex_iterator(); ++it) {
      INFO("link " << (*it)[1]);
      CHECK(std::filesystem::exists(std::filesystem::path(site) / (*it)[1].str()));
    }
  }
  const std::string index = slurp(std::filesystem::path(site) / "index.html");
  CHECK_THAT(index, Catch::Contains("2 CPU ranks: 143 % efficiency, 2.86x"));  // run 2's headline
  CHECK_THAT(index, Catch::Contains("release"));
  const std::string experiment = slurp(std::filesystem::path(site) / "experiment-toy.html");
  CHECK_THAT(experiment, Catch::Contains("Newest run 2 against run 1"));
  CHECK_THAT(experiment, Catch::Contains("against baseline 'release' (run 1)"));
  CHECK_THAT(experiment, Catch::Contains("<section id=\"history\">"));
  CHECK_THAT(slurp(std::filesystem::path(site) / "run-2.html"),
             Catch::Contains("Compared with the previous run, 1"));
  CHECK(siteSlug("my model/v2") == "my_model_v2");
  CHECK_THROWS_WITH(writeSite(store, "/proc/no-such-site"), Catch::Contains("cannot make"));
}
