#include "synk/plugins/host/detail/spec_collector.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "synk/core/error.h"

namespace synk::plugin_host {
namespace {

// The ABI's codes are core's enum values: mapping is a cast, checked here once.
static_assert(SYNK_DTYPE_FLOAT32 == static_cast<int>(DType::Float32) &&
              SYNK_DTYPE_FLOAT64 == static_cast<int>(DType::Float64) &&
              SYNK_DTYPE_INT32 == static_cast<int>(DType::Int32) &&
              SYNK_DTYPE_INT64 == static_cast<int>(DType::Int64) &&
              SYNK_DTYPE_UINT8 == static_cast<int>(DType::UInt8) &&
              SYNK_DTYPE_FLOAT16 == static_cast<int>(DType::Float16) &&
              SYNK_DTYPE_BFLOAT16 == static_cast<int>(DType::BFloat16) &&
              SYNK_DTYPE_COUNT == kNumDTypes);
static_assert(SYNK_VARIABLE_PLAIN == static_cast<int>(VariableKind::Plain) &&
              SYNK_VARIABLE_MIRRORED == static_cast<int>(VariableKind::Mirrored) &&
              SYNK_VARIABLE_RANK_LOCAL == static_cast<int>(VariableKind::RankLocal));
static_assert(SYNK_REDUCTION_SUM == static_cast<int>(LocalReduction::Sum) &&
              SYNK_REDUCTION_MEAN == static_cast<int>(LocalReduction::Mean));

// A declaration that breaks a rule throws Invalid; record() keeps the first message.
using Invalid = InvalidArgument;

std::string checkedName(const char* name, const std::string& what) {
  if (!name) throw Invalid(str(what, " has a NULL name"));
  const size_t length = strnlen(name, SYNK_PLUGIN_MAX_NAME + 1);
  if (length == 0) throw Invalid(str(what, " has an empty name"));
  if (length > SYNK_PLUGIN_MAX_NAME) {
    throw Invalid(str(what, " has a name longer than ", SYNK_PLUGIN_MAX_NAME, " bytes"));
  }
  return std::string(name, length);
}

DType checkedDType(int32_t code, const std::string& what) {
  if (!isValidDType(code)) {
    throw Invalid(str(what, ": unknown dtype code ", code, " (ABI ", SYNK_PLUGIN_ABI_MAJOR, ".",
                      SYNK_PLUGIN_ABI_MINOR, " defines 0..", SYNK_DTYPE_COUNT - 1, ")"));
  }
  return static_cast<DType>(code);
}

int checkedNdim(int32_t ndim, const std::string& what) {
  if (ndim < 0 || ndim > SYNK_PLUGIN_MAX_NDIM) {
    throw Invalid(str(what, " has ndim ", ndim, "; allowed 0..", SYNK_PLUGIN_MAX_NDIM));
  }
  return ndim;
}

void checkStructSize(uint32_t got, size_t needed, const char* type, const std::string& what) {
  if (got < needed) {
    throw Invalid(str(what, ": ", type, " has struct_size ", got, "; ABI ", SYNK_PLUGIN_ABI_MAJOR,
                      ".", SYNK_PLUGIN_ABI_MINOR, " needs at least ", needed));
  }
}

// The element count of a declared shape, refusing negative dimensions and overflow.
uint64_t checkedBytes(const Shape& shape, DType dtype, const std::string& what) {
  uint64_t bytes = dtypeSize(dtype);
  for (int64_t dim : shape) {
    if (dim < 0)
      throw Invalid(str(what, " has a negative dimension in shape ", shapeString(shape)));
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes)) {
      throw Invalid(str(what, " has a shape too large to address: ", shapeString(shape)));
    }
  }
  return bytes;
}

std::vector<TensorSpec> tensors(const synk_tensor_decl* array, uint32_t count,
                                const std::string& function, const char* role) {
  std::vector<TensorSpec> out;
  if (count > 0 && !array) {
    throw Invalid(str(function, " declares ", count, " ", role, "s but the array is NULL"));
  }
  for (uint32_t i = 0; i < count; ++i) {
    const synk_tensor_decl& decl = *synk_tensor_decl_at(array, i);
    const std::string what = str(function, ", ", role, " ", i);
    checkStructSize(decl.struct_size, sizeof(synk_tensor_decl), "synk_tensor_decl", what);
    if (decl.struct_size != array->struct_size) {
      throw Invalid(str(what, ": struct_size ", decl.struct_size, " differs from element 0's ",
                        array->struct_size));
    }
    TensorSpec tensor;
    tensor.name = checkedName(decl.name, what);
    const std::string named = str(function, ", ", role, " '", tensor.name, "'");
    for (const TensorSpec& other : out) {
      if (other.name == tensor.name) throw Invalid(str(named, " is declared twice"));
    }
    tensor.dtype = checkedDType(decl.dtype, named);
    tensor.ndim = checkedNdim(decl.ndim, named);
    out.push_back(std::move(tensor));
  }
  return out;
}

std::vector<std::string> names(const char* const* array, uint32_t count,
                               const std::string& function, const char* verb) {
  std::vector<std::string> out;
  if (count > 0 && !array) {
    throw Invalid(str(function, " ", verb, " ", count, " variables but the array is NULL"));
  }
  for (uint32_t i = 0; i < count; ++i) {
    std::string name = checkedName(array[i], str("variable ", i, " that ", function, " ", verb));
    for (const std::string& other : out) {
      if (other == name) throw Invalid(str(function, " ", verb, " variable '", name, "' twice"));
    }
    out.push_back(std::move(name));
  }
  return out;
}

bool hasVariable(const ModelSpec& spec, const std::string& name) {
  for (const VariableSpec& v : spec.variables) {
    if (v.name == name) return true;
  }
  return false;
}

}  // namespace

RawOptions::RawOptions(ModelOptions values) : values_(std::move(values)) {
  for (const auto& [key, value] : values_) {
    synk_option option{};
    option.struct_size = sizeof option;
    option.key = key.c_str();
    option.value = value.c_str();
    items_.push_back(option);
  }
}

ModelSpec describeModel(const PluginLibrary& library, const RawOptions& options) {
  SpecCollector collector;
  const synk_describe_sink sink = collector.sink(options);
  char error[4096] = {};
  const synk_status status = library.table().describe(&sink, error, sizeof error);
  error[sizeof error - 1] = '\0';  // a plugin that overran error_size still ends here
  return collector.finish(library.path(), status, error, options.values());
}

synk_describe_sink SpecCollector::sink(const RawOptions& options) {
  synk_describe_sink sink{};
  sink.struct_size = sizeof sink;
  sink.host = this;
  sink.set_name = &SpecCollector::setName;
  sink.add_variable = &SpecCollector::addVariable;
  sink.add_function = &SpecCollector::addFunction;
  sink.n_options = options.count();
  sink.options = options.data();
  sink.add_option = &SpecCollector::addOption;
  return sink;
}

template <typename Fn>
synk_status SpecCollector::record(Fn&& fn) noexcept {
  try {
    fn();
    return SYNK_OK;
  } catch (const std::bad_alloc&) {
    if (first_error_.empty()) first_error_ = "out of memory while copying a declaration";
    return SYNK_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    try {
      if (first_error_.empty()) first_error_ = e.what();
    } catch (...) {
    }
    return SYNK_ERROR_INVALID_ARGUMENT;
  }
}

synk_status SpecCollector::setName(void* host, const char* name) noexcept {
  auto* self = static_cast<SpecCollector*>(host);
  return self->record([&] { self->takeName(name); });
}

synk_status SpecCollector::addVariable(void* host, const synk_variable_decl* variable) noexcept {
  auto* self = static_cast<SpecCollector*>(host);
  return self->record([&] {
    if (!variable) throw Invalid("add_variable was given NULL");
    self->takeVariable(*variable);
  });
}

synk_status SpecCollector::addFunction(void* host, const synk_function_decl* function) noexcept {
  auto* self = static_cast<SpecCollector*>(host);
  return self->record([&] {
    if (!function) throw Invalid("add_function was given NULL");
    self->takeFunction(*function);
  });
}

synk_status SpecCollector::addOption(void* host, const synk_option_decl* option) noexcept {
  auto* self = static_cast<SpecCollector*>(host);
  return self->record([&] {
    if (!option) throw Invalid("add_option was given NULL");
    self->takeOption(*option);
  });
}

void SpecCollector::takeName(const char* name) {
  std::string checked = checkedName(name, "the model");
  if (named_) {
    throw Invalid(str("model name set twice ('", spec_.name, "', then '", checked, "')"));
  }
  spec_.name = std::move(checked);
  named_ = true;
}

void SpecCollector::takeVariable(const synk_variable_decl& decl) {
  checkStructSize(decl.struct_size, sizeof(synk_variable_decl), "synk_variable_decl",
                  str("variable ", spec_.variables.size()));
  VariableSpec v;
  v.name = checkedName(decl.name, str("variable ", spec_.variables.size()));
  const std::string what = str("variable '", v.name, "'");
  if (hasVariable(spec_, v.name)) throw Invalid(str(what, " is declared twice"));
  v.dtype = checkedDType(decl.dtype, what);
  if (decl.kind < SYNK_VARIABLE_PLAIN || decl.kind > SYNK_VARIABLE_RANK_LOCAL) {
    throw Invalid(str(what, ": unknown kind code ", decl.kind));
  }
  v.kind = static_cast<VariableKind>(decl.kind);
  if (decl.reduction != SYNK_REDUCTION_SUM && decl.reduction != SYNK_REDUCTION_MEAN) {
    throw Invalid(str(what, ": unknown reduction code ", decl.reduction));
  }
  v.local_reduction = static_cast<LocalReduction>(decl.reduction);
  const int ndim = checkedNdim(decl.ndim, what);
  if (ndim > 0 && !decl.shape) throw Invalid(str(what, " has ndim ", ndim, " but shape is NULL"));
  v.shape.assign(decl.shape, decl.shape + ndim);
  const uint64_t bytes = checkedBytes(v.shape, v.dtype, what);
  if (decl.initial) {
    if (decl.initial_bytes != bytes) {
      throw Invalid(str(what, ": initial value has ", decl.initial_bytes, " bytes; shape ",
                        shapeString(v.shape), " of ", dtypeName(v.dtype), " needs ", bytes));
    }
    v.initial = Array(v.dtype, v.shape);
    std::memcpy(v.initial.data(), decl.initial, bytes);
  } else if (decl.initial_bytes != 0) {
    throw Invalid(str(what, ": initial is NULL but initial_bytes is ", decl.initial_bytes));
  }
  spec_.variables.push_back(std::move(v));
}

void SpecCollector::takeFunction(const synk_function_decl& decl) {
  checkStructSize(decl.struct_size, sizeof(synk_function_decl), "synk_function_decl",
                  str("function ", spec_.functions.size()));
  FunctionSpec fn;
  fn.name = checkedName(decl.name, str("function ", spec_.functions.size()));
  const std::string what = str("function '", fn.name, "'");
  for (const FunctionSpec& other : spec_.functions) {
    if (other.name == fn.name) throw Invalid(str(what, " is declared twice"));
  }
  fn.inputs = tensors(decl.inputs, decl.n_inputs, what, "input");
  fn.outputs = tensors(decl.outputs, decl.n_outputs, what, "output");
  fn.reads = names(decl.reads, decl.n_reads, what, "reads");
  fn.updates = names(decl.updates, decl.n_updates, what, "updates");
  spec_.functions.push_back(std::move(fn));
}

void SpecCollector::takeOption(const synk_option_decl& decl) {
  const std::string index = str("option ", spec_.options.size());
  checkStructSize(decl.struct_size, sizeof(synk_option_decl), "synk_option_decl", index);
  OptionSpec option;
  option.name = checkedName(decl.name, index);
  for (const OptionSpec& other : spec_.options) {
    if (other.name == option.name)
      throw Invalid(str("option '", option.name, "' is declared twice"));
  }
  if (decl.default_value) option.default_value = decl.default_value;
  if (decl.help) option.help = decl.help;
  spec_.options.push_back(std::move(option));
}

// Checked by the host, not the plugin, so a plugin that never looks at its options (ABI 1.0)
// refuses them too instead of ignoring them silently.
void SpecCollector::checkOptions(const ModelOptions& given) const {
  std::string accepted;
  for (const OptionSpec& option : spec_.options)
    accepted += str(accepted.empty() ? "" : ", ", option.name);
  for (const auto& [key, value] : given) {
    const bool known = std::any_of(spec_.options.begin(), spec_.options.end(),
                                   [&](const OptionSpec& o) { return o.name == key; });
    if (known) continue;
    if (accepted.empty()) {
      throw Invalid(str("model '", spec_.name, "' accepts no options; given '", key, "'"));
    }
    throw Invalid(
        str("model '", spec_.name, "' has no option '", key, "' (valid options: ", accepted, ")"));
  }
}

// Functions may name variables declared after them, so references are checked at the end.
void SpecCollector::checkReferences() const {
  std::string declared;
  for (const VariableSpec& v : spec_.variables)
    declared += str(declared.empty() ? "" : ", ", v.name);
  if (declared.empty()) declared = "none";
  for (const FunctionSpec& fn : spec_.functions) {
    for (const auto* list : {&fn.reads, &fn.updates}) {
      for (const std::string& name : *list) {
        if (!hasVariable(spec_, name)) {
          throw Invalid(str("function '", fn.name, "' ", list == &fn.reads ? "reads" : "updates",
                            " unknown variable '", name, "' (declared variables: ", declared, ")"));
        }
      }
    }
  }
}

ModelSpec SpecCollector::finish(const std::string& file, synk_status status, const char* message,
                                const ModelOptions& given) {
  const std::string where = str(file, ": synk_plugin_v1.describe");
  if (!first_error_.empty()) {
    throw PluginError(str(where, " declared an invalid model: ", first_error_));
  }
  if (status != SYNK_OK) {
    throw PluginError(str(where, " failed with ", statusName(status), ": ",
                          message && *message ? message : "(no message)"));
  }
  if (!named_) throw PluginError(str(where, " declared no model name (set_name never called)"));
  try {
    checkReferences();
  } catch (const InvalidArgument& e) {
    throw PluginError(str(where, " declared an invalid model: ", e.what()));
  }
  try {
    checkOptions(given);
  } catch (const InvalidArgument& e) {
    throw PluginError(str(file, ": ", e.what()));
  }
  return std::move(spec_);
}

}  // namespace synk::plugin_host
