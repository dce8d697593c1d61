// DataMaster (data_master.h): Data, the master's side.
#include "synk/core/session/master/data_master.h"

#include "synk/core/array.h"
#include "synk/core/error.h"
#include "synk/core/node_span.h"
#include "synk/core/process_group.h"
#include "synk/core/selection.h"
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

DataMaster::Shipped& DataMaster::heldOf(const BlobRef& ref, uint64_t version) {
  Shipped& held = shipped_[ref.id];
  if (held.generation != ref.generation || held.version != version) {
    held = Shipped{ref.generation, version, false, {}};
  }
  return held;
}

void DataMaster::shipAcrossNodes(const std::vector<const DataImpl*>& data) {
  if (!core_.lifecycle().group().spansNodes()) return;
  request_.blobs.clear();
  request_.rows.clear();
  rows_.clear();
  for (const DataImpl* d : data) {
    const BlobRef ref = d->ref();
    if (ref.bytes == 0) continue;  // no segment (empty or freed): nothing any rank reads
    bool listed = false;           // a Data passed twice
    for (const BlobRef& r : request_.blobs)
      listed = listed || r.id == ref.id;
    if (listed || heldOf(ref, d->version()).whole) continue;
    request_.blobs.push_back(ref);
  }
  runShip();
}

void DataMaster::shipCallInputs(const std::vector<const DataImpl*>& data,
                                const CallRequest& request, const std::vector<uint8_t>& broadcast) {
  ProcessGroup& group = core_.lifecycle().group();
  if (!group.spansNodes()) return;
  request_.blobs.clear();
  request_.rows.clear();
  rows_.clear();
  // Read whole: a broadcast input, and a device-resident one (each rank copies all of it once).
  auto whole = [&](size_t i) {
    return broadcast[i] != 0 || request.inputs[i].device_resident != 0 || request.batch_rows < 0;
  };
  for (size_t i = 0; i < data.size(); ++i) {
    const BlobRef ref = data[i]->ref();
    if (ref.bytes == 0 || !whole(i)) continue;
    bool listed = false;
    for (const BlobRef& r : request_.blobs)
      listed = listed || r.id == ref.id;
    if (listed || heldOf(ref, data[i]->version()).whole) continue;
    request_.blobs.push_back(ref);
  }
  const NodeSpan& span = group.span();
  const int n = core_.lifecycle().size();
  for (size_t i = 0; i < data.size(); ++i) {
    const BlobRef ref = data[i]->ref();
    if (ref.bytes == 0 || whole(i)) continue;
    bool sent_whole = false;  // the same Data is also an input read whole
    for (const BlobRef& r : request_.blobs)
      sent_whole = sent_whole || r.id == ref.id;
    const Shipped& held = heldOf(ref, data[i]->version());
    if (sent_whole || held.whole) continue;
    const CallInput& in = request.inputs[i];
    const size_t row_bytes = rowBytes(in.shape, in.dtype);
    const int64_t offset = in.minibatch ? request.batch.first() : 0;
    for (int node = 1; node < span.nodes; ++node) {
      // The node's ranks are consecutive: their shares are one run of the batch's positions.
      const int first = node * span.ranks_per_node;
      const RowRange positions{
          splitRows(request.batch_rows, n, first).begin,
          splitRows(request.batch_rows, n, first + span.ranks_per_node - 1).end};
      if (positions.size() <= 0) continue;
      RowSet needed;
      if (request.batch.isContiguous()) {
        needed.add({request.batch.rowAt(positions.begin) - offset,
                    request.batch.rowAt(positions.end - 1) - offset + 1});
      } else {
        std::vector<int64_t> rows;
        rows.reserve(static_cast<size_t>(positions.size()));
        for (int64_t p = positions.begin; p < positions.end; ++p)
          rows.push_back(request.batch.rowAt(p) - offset);
        needed = RowSet::of(std::move(rows));
      }
      const RowSet missing =
          static_cast<size_t>(node) < held.nodes.size() ? needed.minus(held.nodes[node]) : needed;
      if (missing.empty()) continue;
      request_.rows.push_back({ref, node, row_bytes});
      rows_.push_back(missing);
    }
  }
  runShip();
}

void DataMaster::runShip() {
  if (request_.blobs.empty() && request_.rows.empty()) return;
  payload_.clear();
  payload_.write(request_);
  store_.setRowsToShip(rows_);
  core_.lifecycle().runStep(Opcode::ShipData, payload_, "ship data to the other nodes");
  // Shipped (the step raised otherwise): what each node holds now.
  for (const BlobRef& ref : request_.blobs) {
    Shipped& held = shipped_[ref.id];
    held.whole = true;
    held.nodes.clear();
  }
  for (size_t e = 0; e < request_.rows.size(); ++e) {
    Shipped& held = shipped_[request_.rows[e].blob.id];
    const auto node = static_cast<size_t>(request_.rows[e].node);
    if (held.nodes.size() <= node) held.nodes.resize(node + 1);
    held.nodes[node].add(rows_[e]);
  }
  store_.setRowsToShip({});
}

}  // namespace synk::detail
