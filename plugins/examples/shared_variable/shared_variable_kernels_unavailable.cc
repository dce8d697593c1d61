// The "shared_variable" example built without CUDA: a call on a cuda device fails with this.
#include "synk/plugins/examples/shared_variable/shared_variable_kernels.h"

namespace synk_examples::shared_variable {

bool haveCudaKernels() {
  return false;
}

const char* launchColumnUpdate(const float*, const float*, float*, int64_t, int64_t, void*) {
  return "this build has no CUDA kernels (synk was configured without CUDA)";
}

}  // namespace synk_examples::shared_variable
