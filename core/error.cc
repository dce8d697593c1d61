#include "synk/core/error.h"

#include <cstring>

namespace synk {

SystemError::SystemError(const std::string& what, int err)
    : Error(str(what, ": ", std::strerror(err), " (errno ", err, ")")), code_(err) {}

namespace detail {

void throwCheckFailure(const char* file, int line, const char* expr, const std::string& message) {
  throw InternalError(str("synk internal check failed at ", file, ":", line, ": ", expr,
                          message.empty() ? "" : " -- ", message));
}

void throwSyscallFailure(const char* file, int line, const char* expr, const std::string& message,
                         int err) {
  throw SystemError(str(message.empty() ? std::string(expr) : message, " [", file, ":", line, "]"),
                    err);
}

}  // namespace detail
}  // namespace synk
