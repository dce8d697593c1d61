// DataMaster (data_master.h): Data, the master's side.
#include "synk/core/session/master/data_master.h"

#include "synk/core/error.h"
#include "synk/core/session/data_impl.h"
#include "synk/core/session/session_core.h"

namespace synk::detail {

Data DataMaster::makeData(DType dtype, const Shape& shape, const DataOptions& options) {
  core_.lifecycle().ensureOpen();
  core_.lifecycle().requireOneNode("data");
  return core_.dataHandle(
      std::make_shared<DataImpl>(core_.shared_from_this(), nextBlobId(), dtype, shape, options));
}

const DataImpl& DataMaster::resolve(const Data& data, const std::string& what) {
  if (!data) throw InvalidArgument(str(what, ": empty Data handle"));
  const DataImpl& impl = SessionCore::dataImpl(data);
  if (&impl.core() != &core_) {
    throw InvalidArgument(str(what, ": ", impl.label(), " belongs to another session"));
  }
  if (numElements(impl.shape()) > 0 && impl.allocElements() == 0) {
    throw InvalidArgument(str(what, ": ", impl.label(), " was freed"));
  }
  return impl;
}

}  // namespace synk::detail
