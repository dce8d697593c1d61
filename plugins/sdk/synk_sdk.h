#pragma once
// The C++ SDK for synk model plugins: header-only, C++17 or later, standard library and the C ABI
// header (plugins/abi/synk_plugin.h) only. A plugin never links a synk library.
//
// A model is a class with three members, exported by one macro:
//
//   #include "synk/plugins/sdk/synk_sdk.h"
//   namespace sdk = synk::sdk;
//
//   class Scale {
//    public:
//     static sdk::Spec spec() {                       // called in the master, before fork:
//       sdk::Spec spec("scale");                      // no CUDA here
//       spec.variable("k", sdk::DType::Float32, {}).initialValues<float>({2});
//       spec.function("apply").input("x", sdk::DType::Float32, 1).read("k")
//           .output("y", sdk::DType::Float32, 1);
//       return spec;
//     }
//     explicit Scale(const sdk::Context&) {}          // in each rank, after fork
//     void call(int /*function*/, sdk::Call& call) {  // or call(std::string_view name, Call&)
//       sdk::ConstTensor x = call.input("x");
//       const float k = *call.read("k").as<float>();
//       float* y = call.output("y", {x.dim(0)}).as<float>();
//       for (int64_t i = 0; i < x.dim(0); ++i) y[i] = k * x.as<float>()[i];
//     }
//   };
//   SYNK_PLUGIN(Scale)
//
// A model with load options declares `static sdk::Spec spec(const sdk::Options& options)`
// instead: the getters it calls (options.getInt("depth", 2), getIntList("widths", {256, 128}))
// are the keys it accepts, and the constructor reads them again from context.options().
//
// spec() must return the same declaration every time (for the same options): the SDK calls it in
// describe and again in each rank's create, to look tensors up by name. Any exception thrown by
// spec(), the constructor or call() is caught at the seam: the host sees a status code (sdk::Error
// chooses it; otherwise Internal) and the exception's message. Tensors are in the rank's device
// memory: host memory when context.device() is Host, GPU memory (work ordered on context.stream())
// when it is Cuda. Write updated variables through call.update(), never through call.read(). See
// plugins/README.md for the rules.
#include "synk/plugins/abi/synk_plugin.h"
#include "synk/plugins/sdk/detail/adapter.h"
#include "synk/plugins/sdk/detail/call.h"
#include "synk/plugins/sdk/detail/handlers.h"
#include "synk/plugins/sdk/detail/options.h"
#include "synk/plugins/sdk/detail/spec.h"
#include "synk/plugins/sdk/detail/types.h"

// Exports the two symbols of the ABI for ClassName. Use once per library, at global scope.
#define SYNK_PLUGIN(ClassName)                                                   \
  extern "C" SYNK_PLUGIN_EXPORT uint32_t synk_plugin_abi_version(void) {         \
    return SYNK_PLUGIN_ABI_VERSION;                                              \
  }                                                                              \
  extern "C" SYNK_PLUGIN_EXPORT const synk_plugin_v1* synk_plugin_v1_get(void) { \
    return &::synk::sdk::detail::Adapter<ClassName>::kTable;                     \
  }
