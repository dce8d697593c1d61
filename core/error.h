#pragma once
// The one exception hierarchy of synk and its check macros.
//
// Recovery contract (core/README.md, "Waits, deadlines, faults"):
//   InvalidArgument, UsageError, RankError, PluginError: nothing changed anywhere; the session
//     stays usable.
//   Timeout, PeerFailure: the session is aborted (workers gone, shared memory removed); every
//     later call raises UsageError naming the cause.
//   InternalError, SystemError, CudaError, NcclError inside a command: reported like RankError
//     when only this rank's state is affected, else the session aborts.
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace synk {

// Concatenates any streamable values into one string: str("rank ", r, " failed").
template <typename... Args>
std::string str(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A value passed by the user is wrong (dtype, shape, index, option).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// The call is not allowed now (before fork, after close, fork twice, ...).
class UsageError : public Error {
 public:
  using Error::Error;
};

// A wait passed its deadline. The session is aborted.
class Timeout : public Error {
 public:
  using Error::Error;
};

// A rank's process died or vanished. The session is aborted.
class PeerFailure : public Error {
 public:
  PeerFailure(int rank, std::string what) : Error(std::move(what)), rank_(rank) {}
  int rank() const { return rank_; }

 private:
  int rank_;
};

// Work on one or more ranks raised; the master re-raises with the first failing rank.
class RankError : public Error {
 public:
  RankError(int rank, std::string what) : Error(std::move(what)), rank_(rank) {}
  int rank() const { return rank_; }

 private:
  int rank_;
};

// A model plugin failed to load, declare, create or run.
class PluginError : public Error {
 public:
  using Error::Error;
};

// An operating-system call failed; what() names the call and errno's text.
class SystemError : public Error {
 public:
  SystemError(const std::string& what, int err);
  int code() const { return code_; }

 private:
  int code_;
};

class CudaError : public Error {
 public:
  using Error::Error;
};

class NcclError : public Error {
 public:
  using Error::Error;
};

// A broken invariant inside synk itself: a bug, never the user's fault.
class InternalError : public Error {
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] void throwCheckFailure(const char* file, int line, const char* expr,
                                    const std::string& message);
[[noreturn]] void throwSyscallFailure(const char* file, int line, const char* expr,
                                      const std::string& message, int err);
}  // namespace detail

}  // namespace synk

// Internal invariants: throw InternalError with file:line, the expression and a message.
#define SYNK_CHECK(cond, ...)                                                        \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      ::synk::detail::throwCheckFailure(__FILE__, __LINE__, #cond,                   \
                                        ::synk::str("" __VA_OPT__(, ) __VA_ARGS__)); \
    }                                                                                \
  } while (0)

// Equality invariant printing both values.
#define SYNK_CHECK_EQ(a, b, ...)                                                               \
  do {                                                                                         \
    const auto& synk_check_a_ = (a);                                                           \
    const auto& synk_check_b_ = (b);                                                           \
    if (!(synk_check_a_ == synk_check_b_)) {                                                   \
      ::synk::detail::throwCheckFailure(                                                       \
          __FILE__, __LINE__, #a " == " #b,                                                    \
          ::synk::str(synk_check_a_, " vs ", synk_check_b_ __VA_OPT__(, ": ", ) __VA_ARGS__)); \
    }                                                                                          \
  } while (0)

// POSIX calls returning -1 (or a negative value) and setting errno: throw SystemError.
#define SYNK_SYSCALL_CHECK(expr, ...)                                                         \
  ([&]() {                                                                                    \
    auto synk_rc_ = (expr);                                                                   \
    if (synk_rc_ < 0) {                                                                       \
      ::synk::detail::throwSyscallFailure(__FILE__, __LINE__, #expr,                          \
                                          ::synk::str("" __VA_OPT__(, ) __VA_ARGS__), errno); \
    }                                                                                         \
    return synk_rc_;                                                                          \
  }())
