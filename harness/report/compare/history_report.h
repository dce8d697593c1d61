#pragma once
// A history (history.h) as a console table per point and as the HTML report's section: per
// point, a plot of the median per commit with each segment's level between change points
// (dashed), and the table of commits with the change points marked.
#include <cstdio>
#include <string>

#include "synk/harness/analysis/history.h"

namespace synk::harness {

void printHistory(std::FILE* out, const History& history);
std::string historyHtmlSection(const History& history);

}  // namespace synk::harness
