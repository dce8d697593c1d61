#include "synk/core/session/session_core.h"

#include "synk/core/error.h"

namespace synk::detail {

SessionCore::SessionCore(const ForkOptions& options, BackendRegistry registry,
                         std::shared_ptr<ModelLoader> loader, BackendFactory& factory)
    : loader_(std::move(loader)),
      steps_(data_store_, uniform_shapes_, table_.shapeGeneration(),
             [this](const std::string& reason) { lifecycle_.abortAndClose(reason); }),
      distribute_handler_(rank_, table_, *loader_, call_collectives_),
      lifecycle_(options, std::move(registry), factory,
                 {rank_, data_store_, table_, collective_handler_, steps_}) {
  steps_.handle(Opcode::Barrier, barrier_handler_);
  steps_.handle(Opcode::Synchronize, synchronize_handler_);
  steps_.handle(Opcode::Distribute, distribute_handler_);
  steps_.handle(Opcode::Call, call_handler_);
  steps_.handle(Opcode::Collective, collective_handler_);
  steps_.handle(Opcode::ShipData, ship_data_handler_);
}

std::pair<uint32_t, uint32_t> SessionCore::resolve(const Variable& variable,
                                                   const std::string& what) {
  lifecycle_.ensureOpen();
  if (!variable.core_) throw InvalidArgument(str(what, ": empty Variable handle"));
  if (variable.core_.get() != this) {
    throw InvalidArgument(
        str(what, ": variable '", variable.name(), "' belongs to another session"));
  }
  return {variable.model_, variable.index_};
}

}  // namespace synk::detail
