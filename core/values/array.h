#pragma once
// Host n-d arrays: Array owns its bytes, ArrayView points at someone else's (a Data segment, an
// Array, a plugin buffer). Both are dense, row-major, with a fixed dtype.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "synk/core/dtype.h"
#include "synk/core/error.h"

namespace synk {

using Shape = std::vector<int64_t>;

// Throws InvalidArgument for a negative dimension or a count that overflows.
int64_t numElements(const Shape& shape);
// elements * dtypeSize, throwing InvalidArgument on overflow (or past 2^60 bytes).
size_t byteCount(int64_t elements, DType dtype);
// Bytes of one row (one element along axis 0) of an array of `shape`: the product of the
// trailing dimensions times the element size; a scalar is one element.
size_t rowBytes(const Shape& shape, DType dtype);
std::string shapeString(const Shape& shape);  // "(100, 10)", "()" for a scalar

class ArrayView {
 public:
  ArrayView() = default;
  ArrayView(void* data, DType dtype, Shape shape);

  void* data() const { return data_; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t size() const { return numElements(shape_); }
  size_t bytes() const { return static_cast<size_t>(size()) * dtypeSize(dtype_); }
  // Length of axis 0; throws for a scalar.
  int64_t length() const;
  // Bytes of one row along axis 0 (the element size for a 1-d array).
  size_t rowBytes() const;

  // Rows [begin, end) of axis 0, sharing memory.
  ArrayView rows(int64_t begin, int64_t end) const;
  ArrayView row(int64_t index) const;

  template <typename T>
  T* as() const {
    checkType(dtypeOf<T>());
    return static_cast<T*>(data_);
  }
  // Element at a multi-index (one index per axis), converted to double.
  double get(std::initializer_list<int64_t> index) const;
  double flat(int64_t i) const;  // i-th element in row-major order, as double

 private:
  void checkType(DType wanted) const;
  size_t offsetOf(std::initializer_list<int64_t> index) const;

  void* data_ = nullptr;
  DType dtype_ = DType::Float32;
  Shape shape_;
};

// Where an Array's bytes live: the heap (zero-filled), or memory allocated elsewhere and adopted
// with its owner (a GPU backend's pinned host memory, which results are copied into at full DMA
// speed), released when the last holder lets go. A copy of either is a heap copy: Array is a value.
class ArrayStorage {
 public:
  ArrayStorage() = default;
  explicit ArrayStorage(size_t bytes);
  ArrayStorage(std::byte* data, size_t bytes, std::shared_ptr<void> owner)
      : owner_(std::move(owner)), data_(bytes ? data : nullptr), bytes_(bytes) {}
  ArrayStorage(const ArrayStorage& other);
  ArrayStorage& operator=(const ArrayStorage& other);
  ArrayStorage(ArrayStorage&& other) noexcept { swap(other); }
  ArrayStorage& operator=(ArrayStorage&& other) noexcept {
    ArrayStorage(std::move(other)).swap(*this);
    return *this;
  }
  void swap(ArrayStorage& other) noexcept {
    std::swap(owner_, other.owner_);
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
  }
  std::byte* data() const { return data_; }
  size_t size() const { return bytes_; }
  bool empty() const { return bytes_ == 0; }

 private:
  std::shared_ptr<void> owner_;
  std::byte* data_ = nullptr;
  size_t bytes_ = 0;
};

class Array {
 public:
  Array() = default;
  Array(DType dtype, Shape shape);  // zero-filled
  // An array over `storage` (at least the shape's bytes), contents as they are.
  Array(DType dtype, Shape shape, ArrayStorage storage);
  static Array zeros(DType dtype, Shape shape) { return Array(dtype, std::move(shape)); }
  static Array copyOf(const ArrayView& view);

  template <typename T>
  static Array of(Shape shape, const std::vector<T>& values) {
    Array out(dtypeOf<T>(), std::move(shape));
    if (static_cast<int64_t>(values.size()) != out.size()) {
      throw InvalidArgument(
          str("Array::of: ", values.size(), " values for shape ", shapeString(out.shape())));
    }
    std::copy(values.begin(), values.end(), static_cast<T*>(out.data()));
    return out;
  }
  template <typename T>
  static Array scalar(T value) {
    return of<T>({}, {value});
  }
  // 1-d array from a list: Array::vector<float>({1, 2, 3}).
  template <typename T>
  static Array vector(const std::vector<T>& values) {
    return of<T>({static_cast<int64_t>(values.size())}, values);
  }

  // Views alias this array's bytes (a const Array yields a writable view: the caller decides).
  ArrayView view() const {
    return ArrayView(const_cast<std::byte*>(bytes_.data()), dtype_, shape_);
  }
  operator ArrayView() const { return view(); }

  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t size() const { return numElements(shape_); }
  size_t bytes() const { return view().bytes(); }
  int64_t length() const { return view().length(); }
  bool empty() const { return bytes_.empty() && shape_.empty(); }

  template <typename T>
  T* as() {
    return view().as<T>();
  }
  template <typename T>
  const T* as() const {
    return view().as<T>();
  }
  template <typename T>
  std::vector<T> toVector() const {
    const T* p = as<T>();
    return std::vector<T>(p, p + size());
  }
  double get(std::initializer_list<int64_t> index) const { return view().get(index); }
  double flat(int64_t i) const { return view().flat(i); }

  // Converts every element (any dtype to any dtype; float -> int truncates toward zero).
  Array castTo(DType dtype) const;
  // Same bytes, new shape with the same number of elements.
  Array reshaped(Shape shape) const;
  // numpy-like text: [[3, 3], [7, 7]]
  std::string toString() const;

 private:
  ArrayStorage bytes_;
  DType dtype_ = DType::Float32;
  Shape shape_;
};

std::string toString(const ArrayView& view);

// The value as it would be stored in an array of `dtype` and `ndim`: the ndim must match and the
// dtype cast must be safe (canCastSafely) unless force_cast. `what` names the destination in the
// InvalidArgument message.
Array conditionValue(const ArrayView& value, DType dtype, int ndim, bool force_cast,
                     const std::string& what);

}  // namespace synk
