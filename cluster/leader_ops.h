// Internal to synk_cluster_mpi: the node leaders' data operations, MPI calls made on the one
// thread that calls MPI (LeaderLink's, or the node bridge's, which runs them between barriers).
// Each is a collective of every node's leader: all call the same ones in the same order. Blocking
// MPI (its fast path); a node that never comes leaves the caller inside MPI for good, which the
// callers bound with their deadlines.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "synk/core/dtype.h"
#include "synk/core/reduce_op.h"

namespace synk::cluster::detail {

// data = op over the nodes' `data`, combined in node order with core's host kernels, the same
// bits on every node (leader_link.h, LeaderLink::allReduce, says how). The op and dtype must be
// a collective op core allows (checkCollectiveOp: the caller's).
void allReduceInNodeOrder(void* data, size_t count, DType dtype, ReduceOp op, int nodes, int node,
                          const std::string& what);
// `bytes` of node `root`'s `data` into every node's `data`.
void broadcastBytes(void* data, size_t bytes, int root, const std::string& what);
// `bytes` of `data` to node `to` / from node `from` (point to point, MPI_COMM_WORLD, a tag of
// their own: the bridge's packets travel on a communicator of its own).
void sendBytes(const void* data, size_t bytes, int to, const std::string& what);
void receiveBytes(void* data, size_t bytes, int from, const std::string& what);
// Node k's `send` (node_bytes[k] bytes) into `recv` at node `root`, in node order (recv: the
// sum of node_bytes; significant at the root only).
void gatherBytes(const void* send, void* recv, const std::vector<size_t>& node_bytes, int root,
                 int node, const std::string& what);
// The same into every node's `recv`.
void allGatherBytes(const void* send, void* recv, const std::vector<size_t>& node_bytes, int node,
                    const std::string& what);

}  // namespace synk::cluster::detail
