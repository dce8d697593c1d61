#pragma once
// Device side of the "intro" example: built from intro_kernels.cu when CUDA is available, from
// intro_kernels_unavailable.cc otherwise (CMake picks one; the model code has no #if).
#include <cstdint>

namespace synk_examples::intro {

// Whether this build has the CUDA kernels.
bool haveCudaKernels();

// Enqueues *z = mean over i of (x[i, :] . y) on `stream` (a cudaStream_t); x is rows x cols,
// y has cols elements, all in GPU memory. Returns nullptr, or why the launch failed.
const char* launchRowDotMean(const float* x, const float* y, float* z, int64_t rows, int64_t cols,
                             void* stream);

}  // namespace synk_examples::intro
