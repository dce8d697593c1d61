#pragma once
// A compare (compare.h) for people and for other tools: the console table, JSON, and the HTML
// report's section.
//
// JSON (schema "synk-bench-compare/1"): {schema, exit, forced, incomplete, thresholds {q,
// correction, min_change, noise_factor, min_repetitions}, baseline {run, experiment, kind, tag,
// commit, dirty, status, machine_key}, candidate {...}, notes [...], summary {worse, better,
// same, incomparable, skipped_in_both}, points [{label, axes {}, baseline_key, candidate_key,
// verdict, reason, forced, baseline {repetitions, median_s, values_s []}, candidate {...},
// change, noise, threshold, p, p_adjusted, exact, min_p, can_reach_significance,
// baseline_joules_per_sample, candidate_joules_per_sample (null without NVML), scaling null |
// {ranks, baseline_speedup, candidate_speedup, speedup_change, speedup_interval [lo, hi],
// efficiency_change, efficiency_interval [lo, hi], verdict}}]}. Times in seconds, changes as
// fractions (0.1 = 10 % slower); a number that is not finite is null.
#include <cstdio>
#include <string>

#include "synk/harness/analysis/compare.h"

namespace synk::harness {

void printCompare(std::FILE* out, const RunCompare& compare);
std::string compareJson(const RunCompare& compare);
// A <section> for the HTML report: the runs, the rule, the notes and the table, each row marked
// worse, better, same or incomparable.
std::string compareHtmlSection(const RunCompare& compare);

// "worse (regression)" etc.: what the exit status means, for the last line of the table.
std::string exitMeaning(int exit_code);

}  // namespace synk::harness
