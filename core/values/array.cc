#include "synk/core/array.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "synk/core/host_kernels.h"

namespace synk {

int64_t numElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw InvalidArgument(str("negative dimension in shape ", shapeString(shape)));
    if (__builtin_mul_overflow(n, d, &n)) {
      throw InvalidArgument(str("shape ", shapeString(shape), " has too many elements"));
    }
  }
  return n;
}

size_t byteCount(int64_t elements, DType dtype) {
  size_t bytes = 0;
  if (elements < 0 ||
      __builtin_mul_overflow(static_cast<size_t>(elements), dtypeSize(dtype), &bytes) ||
      bytes > (size_t{1} << 60)) {
    throw InvalidArgument(str(elements, " elements of ", dtypeName(dtype), " are too many bytes"));
  }
  return bytes;
}

size_t rowBytes(const Shape& shape, DType dtype) {
  int64_t per_row = 1;  // no Shape of the trailing dims: this runs per input on every call
  for (size_t i = 1; i < shape.size(); ++i)
    per_row *= shape[i];
  return static_cast<size_t>(per_row) * dtypeSize(dtype);
}

std::string shapeString(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    out += str(i ? ", " : "", shape[i]);
  if (shape.size() == 1) out += ",";
  return out + ")";
}

ArrayView::ArrayView(void* data, DType dtype, Shape shape)
    : data_(data), dtype_(dtype), shape_(std::move(shape)) {
  numElements(shape_);  // validates
}

int64_t ArrayView::length() const {
  if (shape_.empty()) throw InvalidArgument("a scalar has no length (axis 0)");
  return shape_[0];
}

size_t ArrayView::rowBytes() const {
  if (shape_.empty()) throw InvalidArgument("a scalar has no rows");
  return synk::rowBytes(shape_, dtype_);
}

ArrayView ArrayView::rows(int64_t begin, int64_t end) const {
  const int64_t n = length();
  if (begin < 0 || end < begin || end > n) {
    throw InvalidArgument(str("rows [", begin, ", ", end, ") out of range for length ", n));
  }
  Shape shape = shape_;
  shape[0] = end - begin;
  return ArrayView(static_cast<std::byte*>(data_) + begin * rowBytes(), dtype_, std::move(shape));
}

ArrayView ArrayView::row(int64_t index) const {
  ArrayView one = rows(index, index + 1);
  Shape shape(shape_.begin() + 1, shape_.end());
  return ArrayView(one.data(), dtype_, std::move(shape));
}

void ArrayView::checkType(DType wanted) const {
  if (wanted != dtype_) {
    throw InvalidArgument(str("array holds ", dtypeName(dtype_), ", not ", dtypeName(wanted)));
  }
}

size_t ArrayView::offsetOf(std::initializer_list<int64_t> index) const {
  if (index.size() != shape_.size()) {
    throw InvalidArgument(
        str("index with ", index.size(), " entries for an array of ndim ", shape_.size()));
  }
  size_t offset = 0;
  size_t axis = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= shape_[axis]) {
      throw InvalidArgument(
          str("index ", i, " out of range for axis ", axis, " of shape ", shapeString(shape_)));
    }
    offset = offset * static_cast<size_t>(shape_[axis]) + static_cast<size_t>(i);
    ++axis;
  }
  return offset;
}

double ArrayView::get(std::initializer_list<int64_t> index) const {
  return flat(static_cast<int64_t>(offsetOf(index)));
}

double ArrayView::flat(int64_t i) const {
  if (i < 0 || i >= size()) {
    throw InvalidArgument(str("flat index ", i, " out of range for size ", size()));
  }
  return host::loadAsDouble(static_cast<const std::byte*>(data_) + i * dtypeSize(dtype_), dtype_);
}

ArrayStorage::ArrayStorage(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  std::shared_ptr<std::byte[]> heap(new std::byte[bytes]());
  data_ = heap.get();
  owner_ = std::move(heap);
}

ArrayStorage::ArrayStorage(const ArrayStorage& other) : ArrayStorage() {
  if (other.bytes_ == 0) return;
  std::shared_ptr<std::byte[]> heap(new std::byte[other.bytes_]);
  std::memcpy(heap.get(), other.data_, other.bytes_);
  data_ = heap.get();
  bytes_ = other.bytes_;
  owner_ = std::move(heap);
}

ArrayStorage& ArrayStorage::operator=(const ArrayStorage& other) {
  if (this != &other) ArrayStorage(other).swap(*this);
  return *this;
}

Array::Array(DType dtype, Shape shape)
    : bytes_(static_cast<size_t>(numElements(shape)) * dtypeSize(dtype)),
      dtype_(dtype),
      shape_(std::move(shape)) {}

Array::Array(DType dtype, Shape shape, ArrayStorage storage)
    : bytes_(std::move(storage)), dtype_(dtype), shape_(std::move(shape)) {
  const size_t needed = static_cast<size_t>(numElements(shape_)) * dtypeSize(dtype_);
  if (bytes_.size() < needed) {
    throw InvalidArgument(str("Array: ", bytes_.size(), " bytes of storage for shape ",
                              shapeString(shape_), " of ", dtypeName(dtype_), " (", needed,
                              " bytes)"));
  }
}

Array Array::copyOf(const ArrayView& view) {
  Array out(view.dtype(), view.shape());
  if (view.bytes()) std::memcpy(out.data(), view.data(), view.bytes());
  return out;
}

Array Array::castTo(DType dtype) const {
  Array out(dtype, shape_);
  host::cast(data(), dtype_, out.data(), dtype, static_cast<size_t>(size()));
  return out;
}

Array Array::reshaped(Shape shape) const {
  if (numElements(shape) != size()) {
    throw InvalidArgument(str("cannot reshape ", shapeString(shape_), " to ", shapeString(shape)));
  }
  Array out = *this;
  out.shape_ = std::move(shape);
  return out;
}

std::string Array::toString() const {
  return synk::toString(view());
}

namespace {
void printAxis(std::ostringstream& out, const ArrayView& v, size_t axis, int64_t& flat_index) {
  if (axis == v.shape().size()) {
    double x = v.flat(flat_index++);
    if (isFloating(v.dtype()) && std::floor(x) == x && std::abs(x) < 1e15) {
      out << static_cast<long long>(x) << ".";
    } else {
      out << x;
    }
    return;
  }
  out << "[";
  for (int64_t i = 0; i < v.shape()[axis]; ++i) {
    if (i) out << (axis + 1 == v.shape().size() ? ", " : ",\n" + std::string(axis + 1, ' '));
    printAxis(out, v, axis + 1, flat_index);
  }
  out << "]";
}
}  // namespace

std::string toString(const ArrayView& view) {
  std::ostringstream out;
  int64_t flat_index = 0;
  printAxis(out, view, 0, flat_index);
  return out.str();
}

Array conditionValue(const ArrayView& value, DType dtype, int ndim, bool force_cast,
                     const std::string& what) {
  if (value.ndim() != ndim) {
    throw InvalidArgument(str(what, ": value has ndim ", value.ndim(), " (shape ",
                              shapeString(value.shape()), "), expected ndim ", ndim));
  }
  if (!force_cast && !canCastSafely(value.dtype(), dtype)) {
    throw InvalidArgument(str(what, ": cannot safely cast ", dtypeName(value.dtype()), " to ",
                              dtypeName(dtype), " (pass force_cast to convert anyway)"));
  }
  return Array::copyOf(value).castTo(dtype);
}

}  // namespace synk
