#include "synk/cluster/leader_ops.h"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "synk/cluster/mpi_world.h"
#include "synk/core/error.h"
#include "synk/core/host_kernels.h"

namespace synk::cluster::detail {
namespace {

// MPI counts are ints: a larger vector goes in pieces, each its own collective.
constexpr size_t kMaxPiece = size_t{1} << 30;
// The leaders' point-to-point messages (a reduction's partial along the nodes).
constexpr int kPointToPointTag = 41;

// MPI's all-reduce on two nodes where its one operation per element gives the node-order bits
// whichever operand it puts first: a + b == b + a and a * b == b * a for floats (a NaN's payload
// aside), and int32/int64 wrap and compare exactly. Not float max/min: core's std::max(acc, x)
// keeps acc of -0 and +0, or of a NaN, where MPI's max picks its own; nor float16/bfloat16, which
// MPI has no type for; nor uint8, whose sum Open MPI 4.1's AVX kernels saturate (255 where core
// wraps: the test saw it; open-mpi/ompi#8045, "wontfix"). False where the ordered slices go.
bool orderFreeOnTwo(DType dtype, ReduceOp op, MPI_Datatype& mpi_type, MPI_Op& mpi_op) {
  const bool floating = dtype == DType::Float32 || dtype == DType::Float64;
  switch (dtype) {
    case DType::Float32:
      mpi_type = MPI_FLOAT;
      break;
    case DType::Float64:
      mpi_type = MPI_DOUBLE;
      break;
    case DType::Int32:
      mpi_type = MPI_INT32_T;
      break;
    case DType::Int64:
      mpi_type = MPI_INT64_T;
      break;
    default:
      return false;
  }
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      mpi_op = MPI_SUM;
      return true;
    case ReduceOp::Prod:
      mpi_op = MPI_PROD;
      return true;
    case ReduceOp::Max:
      mpi_op = MPI_MAX;
      return !floating;
    case ReduceOp::Min:
      mpi_op = MPI_MIN;
      return !floating;
    default:
      return false;
  }
}

// Combines in blocks that stay in L1, as the shared-memory reduction does (kBlockBytes there).
constexpr size_t kBlockBytes = 4096;

// Otherwise the grouping and order of the operations matter, and MPI's all-reduce may choose its
// own (a non-commutative op only keeps the operands' order). So: node k owns slice k, receives
// every node's slice k (MPI_Alltoallv, bytes), combines them in node order with core's host
// kernels (avg: the sum times 1/nodes), and every node gathers the combined slices
// (MPI_Allgatherv) — the bytes a ring all-reduce moves, the same bits everywhere, in one
// machine's order.
void combineSlicesInNodeOrder(std::byte* data, int count, DType dtype, ReduceOp op, int nodes,
                              int node, const std::string& what) {
  const int elem = static_cast<int>(dtypeSize(dtype));
  std::vector<int> sizes(nodes), offsets(nodes);  // bytes
  for (int k = 0; k < nodes; ++k) {
    const int first = static_cast<int>(int64_t{count} * k / nodes);
    const int end = static_cast<int>(int64_t{count} * (k + 1) / nodes);
    offsets[k] = first * elem;
    sizes[k] = (end - first) * elem;
  }
  const int mine = sizes[node];
  std::vector<std::byte> parts(static_cast<size_t>(mine) * nodes);
  std::vector<int> from_sizes(nodes, mine), from_offsets(nodes);
  for (int k = 0; k < nodes; ++k)
    from_offsets[k] = k * mine;
  checkMpi(MPI_Alltoallv(data, sizes.data(), offsets.data(), MPI_BYTE, parts.data(),
                         from_sizes.data(), from_offsets.data(), MPI_BYTE, MPI_COMM_WORLD),
           what + " (MPI_Alltoallv)");
  std::byte* out = data + offsets[node];
  for (size_t at = 0; at < static_cast<size_t>(mine); at += kBlockBytes) {
    const size_t bytes = std::min(kBlockBytes, static_cast<size_t>(mine) - at);
    const size_t len = bytes / static_cast<size_t>(elem);
    std::memcpy(out + at, parts.data() + at, bytes);
    for (int k = 1; k < nodes; ++k)
      host::accumulate(out + at, parts.data() + static_cast<size_t>(k) * mine + at, len, dtype, op);
    if (op == ReduceOp::Avg) host::scaleCopy(out + at, out + at, len, dtype, 1.0 / nodes);
  }
  checkMpi(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, data, sizes.data(), offsets.data(), MPI_BYTE,
                          MPI_COMM_WORLD),
           what + " (MPI_Allgatherv)");
}

// MPI's counts and displacements are ints: a gather of more goes whole-node by whole-node, each
// node's part its own broadcast from it (the bytes are the same; the calls more).
bool fitsInt(const std::vector<size_t>& node_bytes) {
  size_t total = 0;
  for (size_t b : node_bytes)
    total += b;
  return total <= static_cast<size_t>(INT32_MAX);
}

// Each node's part as MPI's counts and displacements (they fit: fitsInt).
struct IntLayout {
  std::vector<int> counts, displs;
};
IntLayout intLayout(const std::vector<size_t>& node_bytes) {
  IntLayout parts;
  int total = 0;
  for (size_t bytes : node_bytes) {
    parts.counts.push_back(static_cast<int>(bytes));
    parts.displs.push_back(total);
    total += static_cast<int>(bytes);
  }
  return parts;
}

}  // namespace

void allReduceInNodeOrder(void* data, size_t count, DType dtype, ReduceOp op, int nodes, int node,
                          const std::string& what) {
  if (nodes == 1 || count == 0) return;  // one node: its array is the result (avg scales by 1)
  const size_t elem = dtypeSize(dtype);
  MPI_Datatype mpi_type{};
  MPI_Op mpi_op{};
  const bool mpi_own = nodes == 2 && orderFreeOnTwo(dtype, op, mpi_type, mpi_op);
  auto* bytes = static_cast<std::byte*>(data);
  for (size_t at = 0; at < count; at += kMaxPiece / elem) {
    const size_t piece = std::min(kMaxPiece / elem, count - at);
    std::byte* start = bytes + at * elem;
    if (!mpi_own) {
      combineSlicesInNodeOrder(start, static_cast<int>(piece), dtype, op, nodes, node, what);
      continue;
    }
    checkMpi(MPI_Allreduce(MPI_IN_PLACE, start, static_cast<int>(piece), mpi_type, mpi_op,
                           MPI_COMM_WORLD),
             what + " (MPI_Allreduce)");
    if (op == ReduceOp::Avg) host::scaleCopy(start, start, piece, dtype, 1.0 / nodes);
  }
}

void broadcastBytes(void* data, size_t bytes, int root, const std::string& what) {
  auto* at = static_cast<std::byte*>(data);
  for (size_t done = 0; done < bytes; done += kMaxPiece) {
    const int piece = static_cast<int>(std::min(kMaxPiece, bytes - done));
    checkMpi(MPI_Bcast(at + done, piece, MPI_BYTE, root, MPI_COMM_WORLD), what + " (MPI_Bcast)");
  }
}

void sendBytes(const void* data, size_t bytes, int to, const std::string& what) {
  const auto* at = static_cast<const std::byte*>(data);
  for (size_t done = 0; done < bytes; done += kMaxPiece) {
    const int piece = static_cast<int>(std::min(kMaxPiece, bytes - done));
    checkMpi(MPI_Send(at + done, piece, MPI_BYTE, to, kPointToPointTag, MPI_COMM_WORLD),
             what + " (MPI_Send)");
  }
}

void receiveBytes(void* data, size_t bytes, int from, const std::string& what) {
  auto* at = static_cast<std::byte*>(data);
  for (size_t done = 0; done < bytes; done += kMaxPiece) {
    const int piece = static_cast<int>(std::min(kMaxPiece, bytes - done));
    checkMpi(MPI_Recv(at + done, piece, MPI_BYTE, from, kPointToPointTag, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE),
             what + " (MPI_Recv)");
  }
}

void gatherBytes(const void* send, void* recv, const std::vector<size_t>& node_bytes, int root,
                 int node, const std::string& what) {
  const int nodes = static_cast<int>(node_bytes.size());
  if (!fitsInt(node_bytes)) {
    // Each node's part from it to the root (a broadcast over every node: simple, rare).
    size_t offset = 0;
    std::vector<std::byte> scratch;
    for (int k = 0; k < nodes; ++k) {
      std::byte* into = node == root ? static_cast<std::byte*>(recv) + offset : nullptr;
      if (into == nullptr) {
        scratch.resize(node_bytes[k]);
        into = scratch.data();
      }
      if (node == k && node_bytes[k] > 0) std::memcpy(into, send, node_bytes[k]);
      broadcastBytes(into, node_bytes[k], k, what);
      offset += node_bytes[k];
    }
    return;
  }
  const IntLayout parts = intLayout(node_bytes);
  checkMpi(MPI_Gatherv(send, parts.counts[node], MPI_BYTE, recv, parts.counts.data(),
                       parts.displs.data(), MPI_BYTE, root, MPI_COMM_WORLD),
           what + " (MPI_Gatherv)");
}

void allGatherBytes(const void* send, void* recv, const std::vector<size_t>& node_bytes, int node,
                    const std::string& what) {
  const int nodes = static_cast<int>(node_bytes.size());
  if (!fitsInt(node_bytes)) {
    size_t offset = 0;
    for (int k = 0; k < nodes; ++k) {
      std::byte* into = static_cast<std::byte*>(recv) + offset;
      if (node == k && node_bytes[k] > 0) std::memmove(into, send, node_bytes[k]);
      broadcastBytes(into, node_bytes[k], k, what);
      offset += node_bytes[k];
    }
    return;
  }
  const IntLayout parts = intLayout(node_bytes);
  checkMpi(MPI_Allgatherv(send, parts.counts[node], MPI_BYTE, recv, parts.counts.data(),
                          parts.displs.data(), MPI_BYTE, MPI_COMM_WORLD),
           what + " (MPI_Allgatherv)");
}

}  // namespace synk::cluster::detail
