// The "intro" example built without CUDA: a call on a cuda device fails with this reason.
#include "synk/plugins/examples/intro/intro_kernels.h"

namespace synk_examples::intro {

bool haveCudaKernels() {
  return false;
}

const char* launchRowDotMean(const float*, const float*, float*, int64_t, int64_t, void*) {
  return "this build has no CUDA kernels (synk was configured without CUDA)";
}

}  // namespace synk_examples::intro
