#pragma once
// The model declaration a plugin class returns from `static Spec spec()`: shared variables and
// functions, written fluently or as aggregates. Part of plugins/sdk/synk_sdk.h.
#include <cstddef>
#include <deque>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "synk/plugins/sdk/detail/types.h"

namespace synk::sdk {

// A dimension of a declared output shape that may take any size (the rows of a batch).
constexpr int64_t kAnySize = -1;

struct TensorDecl {
  std::string name{};
  DType dtype = DType::Float32;
  int ndim = 0;
  // Outputs only, optional: the shape every call must allocate (kAnySize where it varies). Empty
  // with ndim > 0 means undeclared: any shape of ndim dimensions.
  Shape shape{};
};

// A shared variable. Aggregate: Variable{.name = "w", .dtype = DType::Float32, .shape = {3, 4}}.
// Every member has an initialiser so that partial aggregates compile clean under -Wextra.
struct Variable {
  std::string name{};
  DType dtype = DType::Float32;
  Shape shape{};
  std::vector<std::byte> initial{};  // row-major bytes; empty: zeros
  VariableKind kind = VariableKind::Plain;
  Reduction reduction = Reduction::Sum;  // rank_local only
  // Instead of `initial`: computed only when the host asks for the declaration (describe), not
  // each time spec() runs (create runs it too); fill(out, bytes) writes every byte. Last member,
  // so positional aggregates of the members above keep compiling.
  std::function<void(std::byte*, size_t)> initial_fill{};

  // Sets the initial value, row-major; T must be the variable's element type (checked by the
  // host too). From a list, initialValues<float>({1, 2}), or from any contiguous range of T:
  // std::vector, std::array, a C array, std::span.
  template <typename T>
  Variable& initialValues(std::initializer_list<T> values) {
    return initialValuesFrom(values.begin(), values.size());
  }
  template <typename Range, typename T = std::remove_cv_t<
                                std::remove_pointer_t<decltype(std::data(std::declval<Range&>()))>>>
  Variable& initialValues(const Range& values) {
    return initialValuesFrom<T>(std::data(values), std::size(values));
  }
  template <typename T>
  Variable& initialValuesFrom(const T* values, size_t count) {
    if (dtypeOf<T>() != dtype) {
      throw Error(Status::InvalidArgument, "variable '" + name + "' is " + dtypeName(dtype) +
                                               ", its initial values are " +
                                               dtypeName(dtypeOf<T>()));
    }
    initial = bytesOf(values, count);
    return *this;
  }
  Variable& initialFrom(std::function<void(std::byte*, size_t)> fill) {
    initial.clear();
    initial_fill = std::move(fill);
    return *this;
  }
  Variable& plain() {
    kind = VariableKind::Plain;
    return *this;
  }
  Variable& mirrored() {
    kind = VariableKind::Mirrored;
    return *this;
  }
  Variable& rankLocal(Reduction how = Reduction::Sum) {
    kind = VariableKind::RankLocal;
    reduction = how;
    return *this;
  }
};

// A function. Aggregate or fluent: spec.function("f").input("x", DType::Float32, 2).read("s").
struct Function {
  std::string name{};
  std::vector<TensorDecl> inputs{};
  std::vector<TensorDecl> outputs{};
  std::vector<std::string> reads{};
  std::vector<std::string> updates{};

  Function& input(std::string tensor, DType dtype, int ndim) {
    inputs.push_back({std::move(tensor), dtype, ndim, {}});
    return *this;
  }
  Function& output(std::string tensor, DType dtype, int ndim) {
    outputs.push_back({std::move(tensor), dtype, ndim, {}});
    return *this;
  }
  // An output with a declared shape: {} is a scalar, {kAnySize, 10} rows of 10. Checked when
  // the spec is described (every dimension >= 0 or kAnySize) and at each allocation.
  Function& output(std::string tensor, DType dtype, Shape shape) {
    const int ndim = static_cast<int>(shape.size());
    outputs.push_back({std::move(tensor), dtype, ndim, std::move(shape)});
    return *this;
  }
  Function& read(std::string variable) {
    reads.push_back(std::move(variable));
    return *this;
  }
  Function& update(std::string variable) {
    updates.push_back(std::move(variable));
    return *this;
  }
};

class Spec {
 public:
  explicit Spec(std::string name) : name_(std::move(name)) {}

  // Fluent declarations return a reference that stays valid while the Spec lives (deque).
  Variable& variable(std::string name, DType dtype, Shape shape) {
    Variable& v = variables_.emplace_back();
    v.name = std::move(name);
    v.dtype = dtype;
    v.shape = std::move(shape);
    return v;
  }
  Function& function(std::string name) {
    Function& f = functions_.emplace_back();
    f.name = std::move(name);
    return f;
  }
  Spec& add(Variable variable) {
    variables_.push_back(std::move(variable));
    return *this;
  }
  Spec& add(Function function) {
    functions_.push_back(std::move(function));
    return *this;
  }

  const std::string& name() const { return name_; }
  const std::deque<Variable>& variables() const { return variables_; }
  const std::deque<Function>& functions() const { return functions_; }
  // Index of the function called `name`, or -1.
  int functionIndex(std::string_view name) const {
    for (size_t i = 0; i < functions_.size(); ++i) {
      if (functions_[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }

 private:
  std::string name_;
  std::deque<Variable> variables_;
  std::deque<Function> functions_;
};

}  // namespace synk::sdk
