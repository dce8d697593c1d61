#pragma once
// Adapts a model class to the C table (synk_plugin_v1): converts the Spec into declarations,
// constructs the class per rank, dispatches calls, and turns every exception into a status code
// and message so that nothing throws across the seam. Part of plugins/sdk/synk_sdk.h.
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "synk/plugins/sdk/detail/call.h"
#include "synk/plugins/sdk/detail/handlers.h"
#include "synk/plugins/sdk/detail/spec.h"

namespace synk::sdk::detail {

inline synk_status keepMessage(std::string& message, const char* what,
                               synk_status status) noexcept {
  try {
    message = (what && *what) ? what : "(exception with an empty message)";
  } catch (...) {
    message.clear();  // out of memory while copying the message: the code still tells
  }
  return status;
}

// Runs fn; maps each exception to a code and keeps its message.
template <typename Fn>
synk_status guard(std::string& message, Fn&& fn) noexcept {
  try {
    fn();
    return SYNK_OK;
  } catch (const Error& e) {
    const auto status = static_cast<synk_status>(e.status());
    return keepMessage(message, e.what(), status == SYNK_OK ? SYNK_ERROR_INTERNAL : status);
  } catch (const std::bad_alloc&) {
    return keepMessage(message, "out of memory (std::bad_alloc)", SYNK_ERROR_OUT_OF_MEMORY);
  } catch (const std::exception& e) {
    return keepMessage(message, e.what(), SYNK_ERROR_INTERNAL);
  } catch (...) {
    return keepMessage(message, "unknown exception (not derived from std::exception)",
                       SYNK_ERROR_INTERNAL);
  }
}

inline void writeMessage(char* buffer, size_t size, const std::string& message) noexcept {
  if (!buffer || size == 0) return;
  const size_t n = message.size() < size - 1 ? message.size() : size - 1;
  std::memcpy(buffer, message.data(), n);
  buffer[n] = '\0';
}

inline std::vector<synk_tensor_decl> toDecls(const std::vector<TensorDecl>& tensors) {
  std::vector<synk_tensor_decl> out;
  for (const TensorDecl& t : tensors) {
    out.push_back(
        {sizeof(synk_tensor_decl), static_cast<int32_t>(t.dtype), t.ndim, t.name.c_str()});
  }
  return out;
}

inline std::vector<const char*> toNames(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  for (const std::string& name : names)
    out.push_back(name.c_str());
  return out;
}

inline void accepted(synk_status status, const std::string& what) {
  if (status != SYNK_OK) throw Error(static_cast<Status>(status), "the host rejected " + what);
}

// Hands every declaration to the host's sink; the host validates and copies them.
inline void describeSpec(const Spec& spec, const synk_describe_sink& sink) {
  if (!SYNK_STRUCT_HAS(&sink, synk_describe_sink, add_function)) {
    throw Error(Status::Unsupported, "the host's synk_describe_sink is too small");
  }
  accepted(sink.set_name(sink.host, spec.name().c_str()), "model name '" + spec.name() + "'");
  for (const Variable& v : spec.variables()) {
    std::vector<std::byte> computed;
    if (v.initial_fill) {
      size_t count = 1;
      for (int64_t dim : v.shape)
        count *= dim > 0 ? static_cast<size_t>(dim) : 0;
      computed.resize(count * dtypeSize(v.dtype));
      v.initial_fill(computed.data(), computed.size());
    }
    const std::vector<std::byte>& initial = v.initial_fill ? computed : v.initial;
    synk_variable_decl decl{};
    decl.struct_size = sizeof decl;
    decl.dtype = static_cast<int32_t>(v.dtype);
    decl.kind = static_cast<int32_t>(v.kind);
    decl.reduction = static_cast<int32_t>(v.reduction);
    decl.name = v.name.c_str();
    decl.ndim = static_cast<int32_t>(v.shape.size());
    decl.shape = v.shape.data();
    decl.initial = initial.empty() ? nullptr : initial.data();
    decl.initial_bytes = initial.size();
    accepted(sink.add_variable(sink.host, &decl), "variable '" + v.name + "'");
  }
  for (const Function& f : spec.functions()) {
    const auto inputs = toDecls(f.inputs);
    const auto outputs = toDecls(f.outputs);
    const auto reads = toNames(f.reads);
    const auto updates = toNames(f.updates);
    synk_function_decl decl{};
    decl.struct_size = sizeof decl;
    decl.name = f.name.c_str();
    decl.n_inputs = static_cast<uint32_t>(inputs.size());
    decl.inputs = inputs.data();
    decl.n_outputs = static_cast<uint32_t>(outputs.size());
    decl.outputs = outputs.data();
    decl.n_reads = static_cast<uint32_t>(reads.size());
    decl.reads = reads.data();
    decl.n_updates = static_cast<uint32_t>(updates.size());
    decl.updates = updates.data();
    accepted(sink.add_function(sink.host, &decl), "function '" + f.name + "'");
  }
}

// A call must match the declaration the host was given.
inline const Function& checkCall(const Spec& spec, const synk_call& raw) {
  if (!SYNK_STRUCT_HAS(&raw, synk_call, allocate_output)) {
    throw Error(Status::Unsupported, "the host's synk_call is too small");
  }
  if (raw.function >= spec.functions().size()) {
    throw Error(Status::InvalidArgument,
                "model '" + spec.name() + "' has no function " + std::to_string(raw.function));
  }
  const Function& f = spec.functions()[raw.function];
  auto expect = [&](uint32_t got, size_t declared, const char* what) {
    if (got != declared) {
      throw Error(Status::InvalidArgument, "function '" + f.name + "' declares " +
                                               std::to_string(declared) + " " + what +
                                               "; the host passed " + std::to_string(got));
    }
  };
  expect(raw.n_inputs, f.inputs.size(), "inputs");
  expect(raw.n_reads, f.reads.size(), "reads");
  expect(raw.n_updates, f.updates.size(), "updates");
  expect(raw.n_outputs, f.outputs.size(), "outputs");
  // Tensors are walked by the host's struct_size; each must hold at least the fields used here.
  for (const auto& [array, count] :
       {std::pair{raw.inputs, raw.n_inputs}, std::pair{raw.reads, raw.n_reads},
        std::pair{raw.updates, raw.n_updates}}) {
    if (count > 0 && array->struct_size < sizeof(synk_tensor)) {
      throw Error(Status::Unsupported, "the host's synk_tensor is too small");
    }
  }
  return f;
}

// A model declares `static Spec spec(const Options&)` (ABI 1.1) or `static Spec spec()`.
template <typename M, typename = void>
struct TakesOptions : std::false_type {};
template <typename M>
struct TakesOptions<M, std::void_t<decltype(M::spec(std::declval<const Options&>()))>>
    : std::true_type {};
template <typename M, typename = void>
struct HasPlainSpec : std::false_type {};
template <typename M>
struct HasPlainSpec<M, std::void_t<decltype(M::spec())>> : std::true_type {};

template <typename M>
Spec specOf(const Options& options) {
  if constexpr (TakesOptions<M>::value) {
    return M::spec(options);
  } else {
    return M::spec();
  }
}

// The accepted options, declared after spec() asked for them. A 1.0 host has no add_option: it
// passes no options either, so there is nothing to check.
inline void declareOptions(const Options& options, const synk_describe_sink& sink) {
  if (!SYNK_STRUCT_HAS(&sink, synk_describe_sink, add_option)) return;
  for (const Options::Declared& d : options.declared()) {
    synk_option_decl decl{};
    decl.struct_size = sizeof decl;
    decl.name = d.name.c_str();
    decl.default_value = d.default_value.c_str();
    decl.help = d.help.empty() ? nullptr : d.help.c_str();
    accepted(sink.add_option(sink.host, &decl), "option '" + d.name + "'");
  }
}

inline Options sinkOptions(const synk_describe_sink& sink) {
  if (!SYNK_STRUCT_HAS(&sink, synk_describe_sink, options)) return {};
  return Options(sink.options, sink.n_options);
}

inline Options hostOptions(const synk_host_services& host) {
  if (!SYNK_STRUCT_HAS(&host, synk_host_services, options)) return {};
  return Options(host.options, host.n_options);
}

// Mistakes a declaration can show before any call: a declared output dimension below kAnySize.
inline void checkSpec(const Spec& spec) {
  for (const Function& f : spec.functions()) {
    for (const TensorDecl& out : f.outputs) {
      for (int64_t dim : out.shape) {
        if (dim < kAnySize) {
          throw Error(Status::InvalidArgument, "function '" + f.name + "' declares output '" +
                                                   out.name + "' with shape " +
                                                   shapeString(out.shape.data(), out.ndim) +
                                                   " (dimensions are >= 0, or kAnySize)");
        }
      }
    }
  }
}

template <typename M, typename = void>
struct HasHandlers : std::false_type {};
template <typename M>
struct HasHandlers<M, std::void_t<decltype(M::handlers())>> : std::true_type {};

template <typename M, typename = void>
struct CallsByName : std::false_type {};
template <typename M>
struct CallsByName<M, std::void_t<decltype(std::declval<M&>().call(std::declval<std::string_view>(),
                                                                   std::declval<Call&>()))>>
    : std::true_type {};

template <typename M>
class Adapter {
  static_assert(
      TakesOptions<M>::value || HasPlainSpec<M>::value,
      "a model needs `static Spec spec(const synk::sdk::Options&)` or `static Spec spec()`");
  static_assert(std::is_same_v<decltype(specOf<M>(std::declval<const Options&>())), Spec>,
                "spec() must return synk::sdk::Spec");
  static_assert(std::is_constructible_v<M, const Context&>,
                "a model needs a constructor taking `const synk::sdk::Context&`");

  // The handler table, when the model has handlers() (else empty: call() dispatches).
  static std::vector<typename Handlers<M>::Method> handlerTable(const Spec& spec) {
    if constexpr (HasHandlers<M>::value) {
      return M::handlers().bind(spec);
    } else {
      return {};
    }
  }

  // Everything one rank's instance owns; the host holds it as an opaque pointer.
  struct Instance {
    Instance(Options o, const synk_device_info* device, const synk_host_services* host)
        : options(std::move(o)),
          spec(specOf<M>(options)),
          handlers(handlerTable(spec)),
          context(device, host, &options),
          model(context) {}
    Options options;
    Spec spec;
    std::vector<typename Handlers<M>::Method> handlers;
    Context context;
    M model;
    std::string last_error;
  };

 public:
  static synk_status describe(const synk_describe_sink* sink, char* error,
                              size_t error_size) noexcept {
    std::string message;
    const synk_status status = guard(message, [&] {
      const Options options = sinkOptions(*sink);
      const Spec spec = specOf<M>(options);
      checkSpec(spec);
      handlerTable(spec);  // a function without a handler fails the load, not its first call
      describeSpec(spec, *sink);
      declareOptions(options, *sink);
    });
    if (status != SYNK_OK) writeMessage(error, error_size, message);
    return status;
  }

  static synk_status create(const synk_device_info* device, const synk_host_services* host,
                            void** instance, char* error, size_t error_size) noexcept {
    std::string message;
    const synk_status status = guard(message, [&] {
      if (!SYNK_STRUCT_HAS(device, synk_device_info, comm) ||
          !SYNK_STRUCT_HAS(host, synk_host_services, release)) {
        throw Error(Status::Unsupported, "the host's device info or services are too small");
      }
      *instance = new Instance(hostOptions(*host), device, host);
    });
    if (status != SYNK_OK) writeMessage(error, error_size, message);
    return status;
  }

  static synk_status call(void* instance, const synk_call* raw) noexcept {
    auto* self = static_cast<Instance*>(instance);
    self->last_error.clear();
    return guard(self->last_error, [&] {
      const Function& decl = checkCall(self->spec, *raw);
      Call frame(raw, &decl, static_cast<int>(raw->function), &self->context);
      if constexpr (HasHandlers<M>::value) {
        (self->model.*(self->handlers[raw->function]))(frame);
      } else if constexpr (CallsByName<M>::value) {
        self->model.call(std::string_view(decl.name), frame);
      } else {
        self->model.call(static_cast<int>(raw->function), frame);
      }
    });
  }

  static const char* lastError(void* instance) noexcept {
    return static_cast<Instance*>(instance)->last_error.c_str();
  }

  static void destroy(void* instance) noexcept { delete static_cast<Instance*>(instance); }

  // Constant data: built by the compiler, no code runs when the library is loaded.
  static constexpr synk_plugin_v1 kTable = {
      sizeof(synk_plugin_v1),
      SYNK_PLUGIN_ABI_VERSION,
      &describe,
      &create,
      &call,
      &lastError,
      &destroy,
  };
};

}  // namespace synk::sdk::detail
