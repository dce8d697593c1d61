#pragma once
// The step protocol. The master writes a command (opcode + payload) into the control block and
// every rank passes the CommandStart barrier; each rank runs the handler for the opcode and
// records a Status in its slot; every rank passes CommandEnd; the master reads the statuses.
//
// A handler reports an error it can agree on (bad per-rank input, a plugin that threw) through
// its Status: every rank still passes every barrier of the step and the session stays usable.
// An exception escaping a handler is fatal: its rank may have skipped barriers, so the session is
// aborted rather than left out of step.
#include <cstdint>
#include <exception>
#include <string>

namespace synk {

enum class Opcode : uint32_t {
  Quit = 1,
  Barrier,
  Distribute,
  Call,
  Collective,
  Synchronize,
  ShipData
};

enum class ErrorKind : int32_t { Ok = 0, InvalidArgument = 1, Plugin = 2, Other = 3 };

struct Status {
  ErrorKind kind = ErrorKind::Ok;
  std::string message;
  bool ok() const { return kind == ErrorKind::Ok; }
  // Classifies a caught exception (InvalidArgument, PluginError, anything else).
  static Status fromException(const std::exception& error);
  static Status invalid(std::string message) {
    return {ErrorKind::InvalidArgument, std::move(message)};
  }
};

// Where a large command payload lives: payloads over kCommandBytes travel in a blob.
struct PayloadHeader {
  uint64_t posted = 0;        // 1: a posted step (no CommandEnd barrier, no status)
  uint64_t inline_bytes = 0;  // > 0: the payload follows in the control block
  uint64_t blob_id = 0;       // else: in this blob
  uint64_t blob_generation = 0;
  uint64_t blob_bytes = 0;
  uint64_t blob_used = 0;  // of which the command takes the first blob_used
};

}  // namespace synk
