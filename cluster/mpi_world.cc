#include "synk/cluster/mpi_world.h"

#include <mpi.h>

#include "synk/core/error.h"

namespace synk::cluster::detail {
namespace {

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

const char* threadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

}  // namespace

void checkMpi(int code, const std::string& what) {
  if (code != MPI_SUCCESS) throw Error(what + ": " + mpiError(code));
}

void startMpi(const NodeLayout& layout) {
  int initialised = 0;
  checkMpi(MPI_Initialized(&initialised), "MPI_Initialized");
  if (initialised) throw UsageError("MPI was initialised before synk's node leaders started it");
  int provided = MPI_THREAD_SINGLE;
  checkMpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  // Errors come back as codes (checkMpi names them) instead of ending the process unexplained.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int size = 0, rank = 0;
  checkMpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  checkMpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw InvalidArgument(str("the MPI library gives ", threadLevelName(provided),
                              "; synk's node leaders need MPI_THREAD_FUNNELED (one thread "
                              "calls MPI): use an MPI built with thread support"));
  }
  if (size != layout.nodes || rank != layout.node) {
    MPI_Finalize();
    throw InvalidArgument(str("MPI's world has ", size, " processes and this is process ", rank,
                              ", but the session's layout has ", layout.nodes,
                              " nodes and this is node ", layout.node,
                              ": start one launcher process per node (mpirun -np NODES "
                              "--map-by ppr:1:node, or srun --ntasks-per-node=1)"));
  }
}

}  // namespace synk::cluster::detail
