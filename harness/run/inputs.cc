#include "synk/harness/run/inputs.h"

#include <algorithm>
#include <cmath>

#include "synk/harness/base/errors.h"
#include "synk/harness/base/hash.h"
#include "synk/harness/base/rng.h"

namespace synk::harness {
namespace {

const InputSpec* find(const std::vector<InputSpec>& specs, const std::string& name) {
  for (const InputSpec& s : specs) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

template <typename T>
void fill(Array& array, double low, double high, bool integral, Rng& rng) {
  T* out = static_cast<T*>(array.data());
  const int64_t n = array.size();
  const double span = integral ? std::floor(high) - std::ceil(low) + 1 : high - low;
  for (int64_t i = 0; i < n; ++i) {
    const double v = integral ? std::ceil(low) + double(rng.below(uint64_t(std::max(1.0, span))))
                              : low + span * rng.uniform();
    if constexpr (std::is_same_v<T, Half>) {
      out[i] = Half{floatToHalf(static_cast<float>(v))};
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      out[i] = BFloat16{floatToBFloat16(static_cast<float>(v))};
    } else {
      out[i] = static_cast<T>(v);
    }
  }
}

}  // namespace

Shape resolveShape(const InputSpec& spec, int64_t rows) {
  Shape shape;
  for (const Dim& d : spec.shape)
    shape.push_back(d.is_batch ? rows : d.value);
  return shape;
}

std::vector<Array> makeInputs(const FunctionSpec& function, const std::vector<InputSpec>& specs,
                              int64_t rows, uint64_t seed) {
  std::vector<Array> arrays;
  for (const TensorSpec& input : function.inputs) {
    const InputSpec* spec = find(specs, input.name);
    const std::string where = "input '" + input.name + "' of function '" + function.name + "'";
    if (!spec) {
      throw BadInput(where + " (" + dtypeName(input.dtype) + ", " + std::to_string(input.ndim) +
                     " dimensions) is not described: add [input." + input.name +
                     "] with its shape (e.g. shape = batch, 784)");
    }
    if (!spec->dtype.empty() && spec->dtype != dtypeName(input.dtype)) {
      throw BadInput(where + " is " + dtypeName(input.dtype) + ", the config says " + spec->dtype);
    }
    if (static_cast<int>(spec->shape.size()) != input.ndim) {
      throw BadInput(where + " has " + std::to_string(input.ndim) +
                     " dimensions, the config's shape has " + std::to_string(spec->shape.size()));
    }
    Array array(input.dtype, resolveShape(*spec, rows));
    const bool integral = !isFloating(input.dtype);
    const auto [low, high] =
        spec->range.value_or(integral ? std::pair{0.0, 1.0} : std::pair{-1.0, 1.0});
    if (integral && std::ceil(low) > std::floor(high)) {
      throw BadInput(where + ": the range holds no integer");
    }
    Rng rng(seed ^ fnv1a(input.name));
    visitDType(input.dtype,
               [&](auto zero) { fill<decltype(zero)>(array, low, high, integral, rng); });
    arrays.push_back(std::move(array));
  }
  return arrays;
}

bool residentInput(const std::vector<InputSpec>& specs, const std::string& name) {
  const InputSpec* spec = find(specs, name);
  return spec != nullptr && spec->resident;
}

std::vector<std::string> broadcastInputs(const FunctionSpec& function,
                                         const std::vector<InputSpec>& specs) {
  std::vector<std::string> names;
  for (const TensorSpec& input : function.inputs) {
    const InputSpec* spec = find(specs, input.name);
    if (spec && spec->broadcast) names.push_back(input.name);
  }
  return names;
}

}  // namespace synk::harness
