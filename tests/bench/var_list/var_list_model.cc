// Model "var_list": `count` float32 variables v0, v1, ... of `elements` elements each (options
// count = 256, elements = 4), and no function: what bench_var_list all-reduces as one list.
// Variables start at zero; the model runs on the host and on a GPU alike (it computes nothing).
#include <string>

#include "synk/plugins/sdk/synk_sdk.h"

namespace {

namespace sdk = synk::sdk;

class VarList {
 public:
  static sdk::Spec spec(const sdk::Options& options) {
    const int64_t count = options.getInt("count", 256, "number of variables");
    const int64_t elements = options.getInt("elements", 4, "float32 elements per variable");
    sdk::Spec spec("var_list");
    for (int64_t k = 0; k < count; ++k)
      spec.variable("v" + std::to_string(k), sdk::DType::Float32, {elements});
    return spec;
  }

  explicit VarList(const sdk::Context&) {}

  void call(int /*no functions*/, sdk::Call&) {}
};

}  // namespace

SYNK_PLUGIN(VarList)
