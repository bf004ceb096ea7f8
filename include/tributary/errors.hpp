// Exceptions Tributary throws.
#pragma once

#include <stdexcept>
#include <string>

namespace tributary {

/// Base class of every exception Tributary throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A usage error: a check before any start, a second start while in flight, a contribution
/// out of range, lengths that differ across ranks... The message names the object, its
/// generation and the rank.
class UsageError : public Error {
 public:
  using Error::Error;
};

/// An MPI call failed. Carries the MPI error code and the library's error string.
class MpiError : public Error {
 public:
  /// An error with MPI error code `code` and message `what`.
  MpiError(int code, const std::string& what) : Error(what), code_(code) {}
  /// The MPI error code.
  int code() const noexcept { return code_; }

 private:
  int code_;
};

/// A failure that happened on another rank (a user operator that threw, a failed task):
/// reported on every rank, naming the rank where it happened.
class RemoteError : public Error {
 public:
  /// A failure on rank `origin_rank`, described by `what`.
  RemoteError(int origin_rank, const std::string& what) : Error(what), origin_(origin_rank) {}
  /// The rank where the failure happened.
  int origin_rank() const noexcept { return origin_; }

 private:
  int origin_;
};

namespace detail {
/// Throws MpiError with `call` and MPI_Error_string's text unless rc is MPI_SUCCESS.
void CheckMpi(int rc, const char* call);
}  // namespace detail

}  // namespace tributary
