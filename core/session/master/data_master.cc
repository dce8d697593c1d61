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

void DataMaster::startShip() {
  request_.blobs.clear();
  request_.lengths.clear();
  request_.rows.clear();
  rows().clear();
}

bool DataMaster::listedWhole(uint64_t id) const {
  for (const BlobRef& r : request_.blobs)
    if (r.id == id) return true;
  return false;
}

void DataMaster::addWhole(const DataImpl& d) {
  const BlobRef ref = d.ref();
  if (ref.bytes == 0) return;  // no segment (empty or freed): nothing any rank reads
  if (listedWhole(ref.id) || heldOf(ref, d.version()).whole) return;
  request_.blobs.push_back(ref);
}

void DataMaster::addRows(const DataImpl& d, const Selection& batch, int64_t offset,
                         const std::function<RowRange(int node)>& positions) {
  const BlobRef ref = d.ref();
  if (ref.bytes == 0 || listedWhole(ref.id)) return;  // also read whole: it goes whole
  const Shipped& held = heldOf(ref, d.version());
  if (held.whole) return;
  const size_t row_bytes = rowBytes(d.shape(), d.dtype());
  for (int node = 1; node < core_.lifecycle().group().span().nodes; ++node) {
    const RowRange p = positions(node);
    if (p.size() <= 0) continue;
    RowSet needed;
    if (batch.isContiguous()) {
      needed.add({batch.rowAt(p.begin) - offset, batch.rowAt(p.end - 1) - offset + 1});
    } else {
      std::vector<int64_t> rows;
      rows.reserve(static_cast<size_t>(p.size()));
      for (int64_t k = p.begin; k < p.end; ++k)
        rows.push_back(batch.rowAt(k) - offset);
      needed = RowSet::of(std::move(rows));
    }
    const auto at = static_cast<size_t>(node);
    RowSet missing = at < held.nodes.size() ? needed.minus(held.nodes[at]) : std::move(needed);
    if (missing.empty()) continue;
    // The same Data twice in one step (two inputs): one entry with the rows of both.
    size_t e = 0;
    while (e < request_.rows.size() &&
           !(request_.rows[e].blob.id == ref.id && request_.rows[e].node == node))
      ++e;
    if (e < request_.rows.size()) {
      rows()[e].add(missing);
      continue;
    }
    request_.rows.push_back({ref, node, row_bytes});
    rows().push_back(std::move(missing));
  }
}

std::function<RowRange(int)> DataMaster::sharesOfNodes(int64_t rows) {
  const NodeSpan& span = core_.lifecycle().group().span();
  const int n = core_.lifecycle().size();
  // A node's ranks are consecutive: their shares are one run of the batch's positions.
  return [rows, n, per_node = span.ranks_per_node](int node) {
    const int first = node * per_node;
    return RowRange{splitRows(rows, n, first).begin, splitRows(rows, n, first + per_node - 1).end};
  };
}

void DataMaster::shipCallInputs(const std::vector<const DataImpl*>& data,
                                const CallRequest& request, const std::vector<uint8_t>& broadcast) {
  if (!core_.lifecycle().group().spansNodes()) return;
  startShip();
  // Read whole: a broadcast input, and a device-resident one (each rank copies all of it once).
  auto whole = [&](size_t i) {
    return broadcast[i] != 0 || request.inputs[i].device_resident != 0 || request.batch_rows < 0;
  };
  for (size_t i = 0; i < data.size(); ++i)
    if (whole(i)) addWhole(*data[i]);
  const auto shares = sharesOfNodes(request.batch_rows);
  for (size_t i = 0; i < data.size(); ++i) {
    if (whole(i)) continue;
    const int64_t offset = request.inputs[i].minibatch ? request.batch.first() : 0;
    addRows(*data[i], request.batch, offset, shares);
  }
  runShip();
}

void DataMaster::shipSources(const std::vector<const DataImpl*>& sources, const Selection& batch,
                             int reader) {
  if (!core_.lifecycle().group().spansNodes()) return;
  startShip();
  const int per_node = core_.lifecycle().group().span().ranks_per_node;
  for (const DataImpl* d : sources) {
    if (d->shape().empty()) {  // a scalar: its one element, whole
      addWhole(*d);
      continue;
    }
    const int64_t rows = batch.size(d->shape()[0]);
    if (reader < 0) {
      addRows(*d, batch, 0, sharesOfNodes(rows));
    } else {
      addRows(*d, batch, 0, [&](int node) {
        return node == reader / per_node ? RowRange{0, rows} : RowRange{};
      });
    }
  }
  runShip();
}

void DataMaster::runShip() {
  if (request_.blobs.empty() && request_.rows.empty()) return;
  payload_.clear();
  payload_.write(request_);
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
    held.nodes[node].add(rows()[e]);
  }
  rows().clear();
}

}  // namespace synk::detail
