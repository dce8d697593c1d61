#include "core/command.h"

#include "core/error.h"

namespace synk {

const char* opcodeName(Opcode opcode) {
  switch (opcode) {
    case Opcode::Quit:
      return "quit";
    case Opcode::Barrier:
      return "barrier";
    case Opcode::Distribute:
      return "distribute";
    case Opcode::Call:
      return "call";
    case Opcode::Collective:
      return "collective";
  }
  return "unknown";
}

Status Status::fromException(const std::exception& error) {
  if (dynamic_cast<const InvalidArgument*>(&error))
    return {ErrorKind::InvalidArgument, error.what()};
  if (dynamic_cast<const PluginError*>(&error)) return {ErrorKind::Plugin, error.what()};
  return {ErrorKind::Other, error.what()};
}

}  // namespace synk
