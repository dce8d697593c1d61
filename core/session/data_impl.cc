// DataImpl (data_impl.h), and the public Data handle's methods on top of it: n-d arrays in shared
// memory that every rank reads. DataMaster (data_master.h) creates them.
#include <cmath>
#include <cstring>

#include "synk/core/error.h"
#include "synk/core/host_kernels.h"
#include "synk/core/session/data_impl.h"
#include "synk/core/session/session_core.h"

namespace synk {
namespace detail {
namespace {

void checkOversize(double oversize) {
  if (!(oversize >= 1.0 && oversize <= 2.0)) {
    throw InvalidArgument(str("oversize must be in [1, 2], got ", oversize));
  }
}

// Elements to allocate for n with slack, refusing counts whose bytes would overflow.
int64_t withSlack(int64_t n, double oversize, DType dtype) {
  const double want = std::ceil(static_cast<double>(n) * oversize);
  if (want > static_cast<double>(int64_t{1} << 60)) {
    throw InvalidArgument(str(n, " elements with oversize ", oversize, " are too many"));
  }
  const auto elements = static_cast<int64_t>(want);
  byteCount(elements, dtype);  // throws when the bytes overflow
  return elements;
}

}  // namespace

DataImpl::DataImpl(std::shared_ptr<SessionCore> core, uint64_t id, DType dtype, Shape shape,
                   const DataOptions& options)
    : core_(std::move(core)),
      id_(id),
      name_(options.name),
      dtype_(dtype),
      shape_(std::move(shape)),
      minibatch_(options.minibatch),
      device_resident_(options.device_resident) {
  checkOversize(options.oversize);
  const int64_t n = numElements(shape_);
  if (n > 0) {
    reallocate(withSlack(n, options.oversize, dtype_), 0);
  }
}

DataImpl::~DataImpl() {
  dropSegment();
}

std::string DataImpl::label() const {
  return name_.empty() ? str("Data #", id_) : str("Data '", name_, "'");
}

void DataImpl::checkOpen() const {
  core_->lifecycle().ensureOpen();
}

void DataImpl::dropSegment() {
  if (!segment_) return;
  if (!core_->lifecycle().ownedHere()) {  // a copy made by fork(): the name is the master's
    segment_ = ShmSegment();
    return;
  }
  ShmSegment::remove(segment_.name());
  segment_ = ShmSegment();
  alloc_elements_ = 0;
  if (!core_->lifecycle().closed()) core_->data().releaseBlob(id_);
}

void DataImpl::reallocate(int64_t elements, size_t keep_bytes) {
  const size_t bytes = std::max<size_t>(byteCount(elements, dtype_), 1);
  ++generation_;
  ShmSegment fresh = ShmSegment::create(blobName(core_->lifecycle().shmPrefix(), id_, generation_),
                                        bytes, label());
  if (keep_bytes && segment_) std::memcpy(fresh.data(), segment_.data(), keep_bytes);
  // Ranks still mapping the old generation keep it until the next step tells them. (Ranks read
  // Data through their BlobCache, which also pins it for the device; this mapping is the
  // master's user-facing one.)
  if (segment_) ShmSegment::remove(segment_.name());
  segment_ = std::move(fresh);
  alloc_elements_ = elements;
}

ArrayView DataImpl::view() const {
  checkOpen();
  if (!segment_ && numElements(shape_) > 0) {
    throw UsageError(str(label(), " has no memory (it was freed)"));
  }
  return ArrayView(segment_.data(), dtype_, shape_);
}

Array DataImpl::condition(const ArrayView& value, bool force_cast) const {
  return conditionValue(value, dtype_, ndim(), force_cast, str("set_value of ", label()));
}

void DataImpl::setValue(const ArrayView& value, bool force_cast, double oversize) {
  checkOpen();
  touch();
  checkOversize(oversize);
  const Array converted = condition(value, force_cast);
  const int64_t n = converted.size();
  if (n > alloc_elements_) {
    reallocate(withSlack(n, oversize, dtype_), 0);
  }
  if (converted.bytes()) std::memcpy(segment_.data(), converted.data(), converted.bytes());
  shape_ = converted.shape();
}

void DataImpl::setShape(const Shape& shape, double oversize) {
  checkOpen();
  touch();
  checkOversize(oversize);
  if (static_cast<int>(shape.size()) != ndim()) {
    throw InvalidArgument(str(label(), ": set_shape to ", shapeString(shape), " changes ndim ",
                              ndim(), " to ", shape.size()));
  }
  const int64_t old_n = numElements(shape_);
  const int64_t n = numElements(shape);
  const size_t esize = dtypeSize(dtype_);
  const size_t keep = static_cast<size_t>(std::min(old_n, n)) * esize;
  if (n > alloc_elements_) {
    reallocate(withSlack(n, oversize, dtype_), keep);
  }
  if (n > old_n) {  // new elements start at zero, whatever the allocation held before
    std::memset(bytes() + keep, 0, static_cast<size_t>(n) * esize - keep);
  }
  shape_ = shape;
}

void DataImpl::freeMemory() {
  checkOpen();
  touch();
  dropSegment();
  if (!shape_.empty()) shape_[0] = 0;
}

}  // namespace detail

detail::DataImpl& Data::impl() const {
  if (!impl_) throw UsageError("this Data handle is empty (create Data with Session::data)");
  return *impl_;
}

uint64_t Data::id() const {
  return impl().id();
}
const std::string& Data::name() const {
  return impl().name();
}
DType Data::dtype() const {
  return impl().dtype();
}
int Data::ndim() const {
  return impl().ndim();
}
const Shape& Data::shape() const {
  return impl().shape();
}
int64_t Data::size() const {
  return numElements(impl().shape());
}
int64_t Data::length() const {
  if (impl().shape().empty()) throw InvalidArgument(str(impl().label(), " is a scalar: no length"));
  return impl().shape()[0];
}
int64_t Data::allocSize() const {
  return impl().allocElements();
}
bool Data::minibatch() const {
  return impl().minibatch();
}

void Data::setValue(const ArrayView& value, bool force_cast, double oversize) {
  impl().setValue(value, force_cast, oversize);
}
Array Data::conditionData(const ArrayView& value, bool force_cast) const {
  return impl().condition(value, force_cast);
}
void Data::setShape(const Shape& shape, double oversize) {
  impl().setShape(shape, oversize);
}
void Data::setLength(int64_t length, double oversize) {
  Shape shape = impl().shape();
  if (shape.empty()) throw InvalidArgument(str(impl().label(), " is a scalar: no length"));
  shape[0] = length;
  impl().setShape(shape, oversize);
}
void Data::freeMemory() {
  impl().freeMemory();
}
ArrayView Data::view() const {
  return impl().view();
}
ArrayView Data::row(int64_t index) const {
  return view().row(index);
}
double Data::get(std::initializer_list<int64_t> index) const {
  return view().get(index);
}
void Data::set(std::initializer_list<int64_t> index, double value) {
  const ArrayView v = view();
  impl().touch();
  // Locate the element through a one-element view of its row-major offset.
  int64_t offset = 0;
  size_t axis = 0;
  for (int64_t i : index) {
    if (axis >= v.shape().size() || i < 0 || i >= v.shape()[axis]) {
      throw InvalidArgument(
          str(impl().label(), ": index out of range for shape ", shapeString(v.shape())));
    }
    offset = offset * v.shape()[axis] + i;
    ++axis;
  }
  if (axis != v.shape().size()) {
    throw InvalidArgument(str(impl().label(), ": index needs ", v.shape().size(), " entries"));
  }
  host::storeFromDouble(static_cast<std::byte*>(v.data()) + offset * dtypeSize(v.dtype()),
                        v.dtype(), value);
}

}  // namespace synk
