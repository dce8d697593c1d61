#pragma once
// `synk-bench export`: a run with every point and sample, as JSON (one document) or CSV (one
// row per sample, the point's axes as columns), for tools outside synk.
#include <cstdint>
#include <cstdio>

#include "synk/harness/store.h"

namespace synk::harness {

void exportJson(std::FILE* out, const Store& store, int64_t run_id);
void exportCsv(std::FILE* out, const Store& store, int64_t run_id);

}  // namespace synk::harness
