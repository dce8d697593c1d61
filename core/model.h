#pragma once
// Models as a program sees them: what a plugin declares (shared variables, functions, options).
// The user-facing handle synk::Model (core/session.h) returns these declarations. How a model is
// loaded, instantiated on a rank and called is the loader interface, core/model_loader.h, which
// only the code that implements or drives it includes (plugins/host, the runtime, tests).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "synk/core/array.h"

namespace synk {

// plain: every rank has its own copy and updates it locally (Synkhronos semantics).
// mirrored: kept identical on every rank; set only through broadcast or all_reduce.
// rank_local: each rank updates its own copy; reading it from the master returns the reduction.
enum class VariableKind : int32_t { Plain = 0, Mirrored = 1, RankLocal = 2 };
enum class LocalReduction : int32_t { Sum = 0, Mean = 1 };
const char* variableKindName(VariableKind kind);

struct VariableSpec {
  std::string name;
  DType dtype = DType::Float32;
  Shape shape;
  Array initial;  // empty: zeros
  VariableKind kind = VariableKind::Plain;
  LocalReduction local_reduction = LocalReduction::Sum;  // rank_local only
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::Float32;
  int ndim = 0;
};

struct FunctionSpec {
  std::string name;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<std::string> reads;    // shared variables the function reads
  std::vector<std::string> updates;  // shared variables it computes new values for
};

// Load-time options of a model (key -> value as text): widths, an optimizer, a learning rate.
// The model declares which keys it accepts; any other key fails the load.
using ModelOptions = std::map<std::string, std::string>;

// An option the model accepts, as it declared it.
struct OptionSpec {
  std::string name;
  std::string default_value;  // as text; empty when the model gave none
  std::string help;
};

struct ModelSpec {
  std::string name;
  std::vector<VariableSpec> variables;
  std::vector<FunctionSpec> functions;
  std::vector<OptionSpec> options;  // what the model accepts (not what it was given)
};

}  // namespace synk
