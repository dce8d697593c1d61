#pragma once
// Internal: the master's side of a Data array (a blob it owns; core/memory/blob.h).
#include <cstdint>
#include <memory>
#include <string>

#include "synk/core/array.h"
#include "synk/core/memory/blob.h"
#include "synk/core/session.h"
#include "synk/core/shm_segment.h"

namespace synk::detail {

class SessionCore;

class DataImpl {
 public:
  DataImpl(std::shared_ptr<SessionCore> core, uint64_t id, DType dtype, Shape shape,
           const DataOptions& options);
  ~DataImpl();
  DataImpl(const DataImpl&) = delete;
  DataImpl& operator=(const DataImpl&) = delete;

  SessionCore& core() const { return *core_; }
  uint64_t id() const { return id_; }
  const std::string& name() const { return name_; }
  // "Data 'x'" or "Data #3" for messages.
  std::string label() const;
  DType dtype() const { return dtype_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  const Shape& shape() const { return shape_; }
  int64_t allocElements() const { return alloc_elements_; }
  bool minibatch() const { return minibatch_; }
  bool deviceResident() const { return device_resident_; }
  // Counts the master's writes, so ranks know when their device copy is stale.
  uint64_t version() const { return version_; }
  void touch() { ++version_; }
  BlobRef ref() const { return {id_, generation_, segment_.size()}; }
  std::byte* bytes() const { return static_cast<std::byte*>(segment_.data()); }
  ArrayView view() const;

  void setValue(const ArrayView& value, bool force_cast, double oversize);
  Array condition(const ArrayView& value, bool force_cast) const;
  void setShape(const Shape& shape, double oversize);
  void freeMemory();

 private:
  void checkOpen() const;
  // A new segment of `elements` (a new generation); keeps the first `keep_bytes` bytes.
  void reallocate(int64_t elements, size_t keep_bytes);
  void dropSegment();

  std::shared_ptr<SessionCore> core_;
  uint64_t id_;
  std::string name_;
  DType dtype_;
  Shape shape_;
  bool minibatch_;
  bool device_resident_;
  uint64_t version_ = 1;
  ShmSegment segment_;
  uint64_t generation_ = 0;
  int64_t alloc_elements_ = 0;
};

}  // namespace synk::detail
