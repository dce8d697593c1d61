#include "synk/core/step/command.h"

#include "synk/core/error.h"

namespace synk {

Status Status::fromException(const std::exception& error) {
  if (dynamic_cast<const InvalidArgument*>(&error))
    return {ErrorKind::InvalidArgument, error.what()};
  if (dynamic_cast<const PluginError*>(&error)) return {ErrorKind::Plugin, error.what()};
  return {ErrorKind::Other, error.what()};
}

}  // namespace synk
