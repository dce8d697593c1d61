#pragma once
// A model's functions bound to its member functions by name. Part of plugins/sdk/synk_sdk.h.
//
//   static sdk::Handlers<Mlp> handlers() {
//     return sdk::Handlers<Mlp>().on("loss", &Mlp::loss).on("train_step", &Mlp::trainStep);
//   }
//
// With handlers() the SDK checks, when the model is loaded (describe), that every declared
// function has a handler and every handler a declared function, and dispatches calls through a
// table (no string compares per call). Without it, the model's call(int | string_view, Call&)
// receives every call.
#include <string>
#include <utility>
#include <vector>

#include "synk/plugins/sdk/detail/call.h"
#include "synk/plugins/sdk/detail/spec.h"

namespace synk::sdk {

template <typename M>
class Handlers {
 public:
  using Method = void (M::*)(Call&);

  Handlers& on(std::string function, Method method) {
    entries_.push_back({std::move(function), method});
    return *this;
  }

  // The handler of each function of `spec`, in declaration order. Throws sdk::Error naming
  // every function without a handler and every handler without a function.
  std::vector<Method> bind(const Spec& spec) const {
    std::vector<Method> table;
    std::string missing, unknown;
    for (const Function& f : spec.functions()) {
      Method found = nullptr;
      for (const Entry& e : entries_) {
        if (e.function == f.name) found = e.method;
      }
      if (!found) missing += (missing.empty() ? "'" : ", '") + f.name + "'";
      table.push_back(found);
    }
    for (const Entry& e : entries_) {
      if (spec.functionIndex(e.function) < 0) {
        unknown += (unknown.empty() ? "'" : ", '") + e.function + "'";
      }
      if (!e.method) missing += (missing.empty() ? "'" : ", '") + e.function + "' (null)";
    }
    if (!missing.empty()) {
      throw Error(Status::InvalidArgument, "model '" + spec.name() + "': function(s) " + missing +
                                               " declared but not implemented (no handler)");
    }
    if (!unknown.empty()) {
      throw Error(Status::InvalidArgument, "model '" + spec.name() + "': handler(s) for " +
                                               unknown + ", which the spec does not declare");
    }
    return table;
  }

 private:
  struct Entry {
    std::string function;
    Method method;
  };
  std::vector<Entry> entries_;
};

}  // namespace synk::sdk
