#pragma once
// Typed views of a call's tensors: a row-major matrix with a leading dimension, a flat vector.
// They check dtype and rank once, where a tensor is taken from the call, so kernels take plain
// pointers and sizes.
#include <cstdint>
#include <string>

#include "synk/plugins/sdk/synk_sdk.h"

namespace synk::compute {

template <typename T>
struct Matrix {
  T* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;  // elements between the starts of two rows (>= cols)
  T* row(int64_t i) const { return data + i * ld; }
};

template <typename T>
struct Vector {
  T* data = nullptr;
  int64_t size = 0;
};

namespace detail {
template <bool kWritable>
void checkRank(const sdk::BasicTensor<kWritable>& tensor, int ndim) {
  if (tensor.ndim() != ndim) {
    throw sdk::Error(sdk::Status::InvalidArgument,
                     "tensor '" + tensor.name() + "' has " + std::to_string(tensor.ndim()) +
                         " dimensions; expected " + std::to_string(ndim));
  }
}
}  // namespace detail

// A 2-d tensor as a matrix (dtype checked by as<T>()).
template <typename T, bool kWritable>
auto matrixOf(const sdk::BasicTensor<kWritable>& tensor) {
  detail::checkRank(tensor, 2);
  auto* data = tensor.template as<T>();
  return Matrix<std::remove_pointer_t<decltype(data)>>{data, tensor.dim(0), tensor.dim(1),
                                                       tensor.dim(1)};
}

// Any tensor as its flat elements.
template <typename T, bool kWritable>
auto vectorOf(const sdk::BasicTensor<kWritable>& tensor) {
  auto* data = tensor.template as<T>();
  return Vector<std::remove_pointer_t<decltype(data)>>{data, tensor.size()};
}

// A 1-d tensor of exactly `size` elements.
template <typename T, bool kWritable>
auto vectorOf(const sdk::BasicTensor<kWritable>& tensor, int64_t size) {
  detail::checkRank(tensor, 1);
  if (tensor.dim(0) != size) {
    throw sdk::Error(sdk::Status::InvalidArgument,
                     "tensor '" + tensor.name() + "' has " + std::to_string(tensor.dim(0)) +
                         " elements; expected " + std::to_string(size));
  }
  return vectorOf<T>(tensor);
}

}  // namespace synk::compute
