// The HTML report's step timeline (report/html/rank_timeline.h): known segments from synthetic
// rank times give known SVG rectangles and hover titles, the straggler is marked, and points
// without rank times get no section.
#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

#include "synk/harness/report/html/rank_timeline.h"
#include "synk/harness/report/html/report_html.h"

using namespace synk::harness;

namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

// The widths of the data marks (<rect class="mark">), in document order.
std::vector<double> markWidths(const std::string& svg) {
  std::vector<double> widths;
  const std::regex rect(R"re(<rect class="mark"[^>]* width="([0-9.]+)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator();
       ++it)
    widths.push_back(std::stod((*it)[1]));
  return widths;
}

// Two ranks, 2 repetitions x 3 steps: rank 1 works 3 ms a step, rank 0 works 1 ms and waits 2 ms;
// both spend 10 us on the runtime's path.
AnalysedPoint straggling() {
  std::vector<RankTimesRecord> times;
  for (int rep = 0; rep < 2; ++rep) {
    for (int step = 0; step < 3; ++step) {
      times.push_back({rep, step, 0, 1'000'000, -1, 10'000, 2'000'000, 3'010'000});
      times.push_back({rep, step, 1, 3'000'000, -1, 10'000, 0, 3'010'000});
    }
  }
  AnalysedPoint a;
  a.record.axes = {{"backend", "cpu"}, {"batch", "8"}, {"ranks", "2"}};
  a.record.status = PointStatus::ok;
  a.step_times = summarizeStepTimes(times);
  return a;
}

}  // namespace

TEST_CASE("step timeline: one lane a rank, its segments' rectangles and microseconds",
          "[harness]") {
  const AnalysedPoint a = straggling();
  REQUIRE(a.step_times->straggler);
  const std::string svg =
      stepTimelineChart("t", "cpu batch=8 ranks=2", a.step_times->timeline.at(0), 1);
  // Rank 0: work, path, wait; rank 1: work and path (it never waits: no segment).
  CHECK(count(svg, "data-marks=\"5\"") == 1);
  CHECK(count(svg, "<rect class=\"mark\"") == 5);
  CHECK(svg.find("<title>rank 0: work 1000.0 us (host 1000.0 us)</title>") != std::string::npos);
  CHECK(svg.find("<title>rank 0: runtime path 10.0 us</title>") != std::string::npos);
  CHECK(svg.find("<title>rank 0: wait for the others 2000.0 us</title>") != std::string::npos);
  CHECK(svg.find("<title>rank 1: work 3000.0 us (host 3000.0 us)</title>") != std::string::npos);
  CHECK(svg.find("rank 1: wait") == std::string::npos);
  // Lengths in proportion: rank 0's work is a third of rank 1's, its wait two thirds.
  const std::vector<double> w = markWidths(svg);
  REQUIRE(w.size() == 5);
  CHECK(w[0] * 3 == Approx(w[3]).epsilon(0.01));
  CHECK(w[2] * 3 == Approx(w[3] * 2).epsilon(0.01));
  // The straggler: outlined and named, rank 0 not.
  CHECK(count(svg, "class=\"lane-mark\"") == 1);
  CHECK(svg.find(">rank 1 (straggler)</text>") != std::string::npos);
  CHECK(svg.find(">rank 0</text>") != std::string::npos);
  // The legend names the three parts.
  CHECK(svg.find(">wait for the others</text>") != std::string::npos);
}

TEST_CASE("step timeline: a GPU rank's work is the longer of host and device", "[harness]") {
  TimelineStep step{
      "median step", 0, 0, 5e-3, {{0, 0, 0, 100'000, 4'000'000, 1'000'000, 0, 5'000'000}}};
  const std::string svg = stepTimelineChart("g", "cuda", step, -1);
  CHECK(svg.find("<title>rank 0: work 4000.0 us (host 100.0 us, device 4000.0 us)</title>") !=
        std::string::npos);
  CHECK(svg.find("lane-mark") == std::string::npos);
}

TEST_CASE("step timeline: the report's section, only for points with rank times", "[harness]") {
  RunData data;
  data.run.id = 1;
  data.run.kind = "train";
  AnalysedPoint without;
  without.record.axes = {{"backend", "cpu"}, {"batch", "8"}, {"ranks", "1"}};
  data.points.push_back(without);
  CHECK(rankTimelineSection(data).empty());
  CHECK(renderHtmlReport(data, Scaling::Weak).find("id=\"timeline") == std::string::npos);
  data.points.push_back(straggling());
  const std::string section = rankTimelineSection(data);
  CHECK(count(section, "<section id=\"timeline\">") == 1);
  // Only the second point: the median step and the slowest step of its median repetition (all
  // steps alike here: one chart), and its table of per-rank medians with the straggler's row.
  CHECK(count(section, "<svg class=\"plot\"") == 1);
  CHECK(section.find("id=\"timeline-1-median\"") != std::string::npos);
  CHECK(section.find("the median step of repetition 0 (step 1, 3.01 ms)") != std::string::npos);
  CHECK(count(section, "<table class=\"rank-medians\">") == 1);
  CHECK(count(section, "<tr class=\"straggler\">") == 1);
  CHECK(section.find("rank 1 is a straggler") != std::string::npos);
  // Every element it opens, it closes.
  for (const char* tag : {"section", "div", "svg", "table", "tr", "figure", "h3", "p"}) {
    INFO(tag);
    CHECK(count(section, "<" + std::string(tag) + ">") +
              count(section, "<" + std::string(tag) + " ") ==
          count(section, "</" + std::string(tag) + ">"));
  }
  const std::string page = renderHtmlReport(data, Scaling::Weak);
  CHECK(count(page, "<section id=\"timeline\">") == 1);
}
