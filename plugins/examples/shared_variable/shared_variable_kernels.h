#pragma once
// Device side of the "shared_variable" example: built from shared_variable_kernels.cu when CUDA
// is available, from shared_variable_kernels_unavailable.cc otherwise.
#include <cstdint>

namespace synk_examples::shared_variable {

bool haveCudaKernels();

// Enqueues s_new[j] = sum over i of x[i, j] * s[j] on `stream` (a cudaStream_t); x is
// rows x cols, s and s_new have cols elements, all in GPU memory. Returns nullptr, or why the
// launch failed.
const char* launchColumnUpdate(const float* x, const float* s, float* s_new, int64_t rows,
                               int64_t cols, void* stream);

}  // namespace synk_examples::shared_variable
