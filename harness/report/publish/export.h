#pragma once
// `synk-bench export`: a run with every point and sample, as JSON (one document) or CSV (one
// row per sample, the point's axes as columns; with --ranks one row per point and rank), for
// tools outside synk.
//
// JSON, schema "synk-bench-export/1" (a reader checks it; a change that breaks readers bumps
// the number):
//   {schema, generator ("synk-bench 0.1.0 (commit ...)"),
//    run {id, experiment, kind, tag, status, message, started_at, ended_at, commit, dirty,
//         build_type, host, cpu_model, cpu_threads, memory_bytes, gpu_model, gpu_count,
//         gpu_topology, driver_version, cuda_version, nccl_version, machine_key, conditions,
//         telemetry, config_file, config_text, config_resolved, command_line},
//    env {NAME: value},
//    points [{id, seq, key, axes {name: value}, status, reason, wrong,
//             nodes, ranks_per_node, hosts ("a,b"; only points run through experiment.launch),
//             summary {over, unit "s", n, median, mean, stdev, min, q1, q3, max,
//                      train: step_s, samples_per_step, samples_per_s, speedup,
//                             speedup_ci95 [lo, hi], efficiency, joules_per_sample,
//                             samples_per_joule, energy_scaling, compute_s, collective_s,
//                             startup_s; rank_times ([{rank, work_s, device_s, path_s, wait_s,
//                             step_s}] medians, experiment.step_times; null without) and
//                             straggler ({rank, slowest_share, work_s, others_work_s} or null),
//                             timeline ([{which ("median step"|"slowest step", of the median
//                             repetition), repetition, step, step_s, ranks [{rank, work_s,
//                             device_s, path_s, wait_s, step_s}]}]: the HTML report's
//                             timeline; null without step times);
//                      collectives: time_s, size_bytes, count, algbw_GBps, busbw_GBps;
//                      energy_per_step_j, gpu_power_w, sm_mhz, throttled_repetitions,
//                      excluded_repetitions, other_cpu, warnings [...]},
//             repetitions [{repetition, startup_ns, steps, status, message, value_s, other_cpu,
//                           gpus [{gpu, seconds, sm_mhz, memory_mhz, power_w, energy_j,
//                                  temperature_c, throttle_reasons, throttled_s, throttled}],
//                           hosts (launched points only)}],
//             samples {columns [repetition, rank, step, ns, compute_ns, collective_ns],
//                      rows [[...], ...]}}]}
// Times in seconds except the raw samples (ns); a value not measured (or not finite) is null.
#include <cstdint>
#include <cstdio>

#include "synk/harness/analysis/analysis.h"
#include "synk/harness/store/store.h"

namespace synk::harness {

inline constexpr const char* kExportSchema = "synk-bench-export/1";

void exportJson(std::FILE* out, const Store& store, int64_t run_id,
                const SummaryOptions& options = {});
void exportCsv(std::FILE* out, const Store& store, int64_t run_id);
// `export --csv --ranks`: one row per training point with step times and rank, the columns
// exportCsv's rows start with, then rank, the per-rank medians over every timed step (work_s,
// device_s (empty on cpu ranks), path_s, wait_s, step_s; analysis/step_times.h) and straggler
// (1 for the point's straggler, else 0).
void exportRankCsv(std::FILE* out, const Store& store, int64_t run_id,
                   const SummaryOptions& options = {});

}  // namespace synk::harness
