#include "core/call_request.h"

namespace synk::detail {

void CallInput::write(ByteWriter& out) const {
  out.put(blob);
  out.put(dtype);
  out.putVector(shape);
  out.put(minibatch);
  out.put(device_resident);
  out.put(version);
}

CallInput CallInput::read(ByteReader& in) {
  CallInput input;
  input.blob = in.get<BlobRef>();
  input.dtype = in.get<DType>();
  input.shape = in.getVector<int64_t>();
  input.minibatch = in.get<uint8_t>();
  input.device_resident = in.get<uint8_t>();
  input.version = in.get<uint64_t>();
  return input;
}

Selection CallRequest::batchS(int rank) const {
  if (batch_s.empty()) return Selection::all();
  return batch_s.size() == 1 ? batch_s[0] : batch_s[static_cast<size_t>(rank)];
}

void CallRequest::write(ByteWriter& out) const {
  out.put(function);
  out.put<uint64_t>(inputs.size());
  for (const CallInput& input : inputs)
    input.write(out);
  batch.write(out);
  out.put<uint64_t>(batch_s.size());
  for (const Selection& s : batch_s)
    s.write(out);
  out.put(num_slices);
  out.put(batch_rows);
  out.putVector(wanted);
}

CallRequest CallRequest::read(ByteReader& in) {
  CallRequest r;
  r.function = in.get<uint32_t>();
  r.inputs.resize(in.get<uint64_t>());
  for (CallInput& input : r.inputs)
    input = CallInput::read(in);
  r.batch = Selection::read(in);
  r.batch_s.resize(in.get<uint64_t>());
  for (Selection& s : r.batch_s)
    s = Selection::read(in);
  r.num_slices = in.get<int32_t>();
  r.batch_rows = in.get<int64_t>();
  r.wanted = in.getVector<uint8_t>();
  return r;
}

}  // namespace synk::detail
