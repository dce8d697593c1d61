#pragma once
// The HTML report's speedup over nodes, for a run whose points were launched over several nodes
// (experiment.launch): x = nodes, one line per ranks per node (and per other axis values), each
// with its ideal (nodes x ranks per node) dashed beside it, so a glance shows whether adding a
// node pays as adding a rank on one does.
#include <string>
#include <vector>

#include "synk/harness/analysis/analysis.h"
#include "synk/harness/config/config.h"

namespace synk::harness {

// A <figure> with the chart, or "" when no row is of a launched point with a speedup.
std::string nodesSpeedupChart(const std::vector<ScalingRow>& rows, Scaling scaling);

}  // namespace synk::harness
