// Internal to synk_cluster_mpi: bringing MPI up for the node leaders, shared by the leader link
// and the node bridge. Whichever calls startMpi() must be the only thread that ever calls MPI
// (MPI_THREAD_FUNNELED).
#pragma once
#include <string>

#include "synk/cluster/launch_env.h"

namespace synk::cluster::detail {

// MPI_Init_thread(MPI_THREAD_FUNNELED) on the calling thread, after the node's ranks forked
// (Open MPI's advice on fork), then the launch checked against `layout`: MPI's world must hold
// layout.nodes processes and this one must be node layout.node, else InvalidArgument naming both
// and the mapping to use; an MPI below MPI_THREAD_FUNNELED is refused naming what it gives;
// MPI already initialised is a UsageError. MPI is finalised again before any of these throws.
void startMpi(const NodeLayout& layout);

// Throws Error("<what>: <MPI's text>") unless `code` is MPI_SUCCESS.
void checkMpi(int code, const std::string& what);

}  // namespace synk::cluster::detail
