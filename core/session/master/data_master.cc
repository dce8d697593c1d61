// DataMaster (data_master.h): Data, the master's side.
#include "synk/core/session/master/data_master.h"

#include "synk/core/error.h"
#include "synk/core/session/data_impl.h"
#include "synk/core/session/session_core.h"

namespace synk::detail {

Data DataMaster::makeData(DType dtype, const Shape& shape, const DataOptions& options) {
  core_.lifecycle().ensureOpen();
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

void DataMaster::shipAcrossNodes(const std::vector<const DataImpl*>& data) {
  SessionLifecycle& life = core_.lifecycle();
  if (!life.group().spansNodes()) return;
  request_.blobs.clear();
  for (const DataImpl* d : data) {
    const BlobRef ref = d->ref();
    if (ref.bytes == 0) continue;  // no segment (empty or freed): nothing any rank reads
    bool listed = false;           // a Data passed twice
    for (const BlobRef& r : request_.blobs)
      listed = listed || r.id == ref.id;
    if (listed) continue;
    const auto it = shipped_.find(ref.id);
    if (it != shipped_.end() && it->second.generation == ref.generation &&
        it->second.version == d->version()) {
      continue;
    }
    request_.blobs.push_back(ref);
  }
  if (request_.blobs.empty()) return;
  payload_.clear();
  payload_.write(request_);
  life.runStep(Opcode::ShipData, payload_, "ship data to the other nodes");
  for (const DataImpl* d : data)
    shipped_[d->ref().id] = {d->ref().generation, d->version()};
}

}  // namespace synk::detail
