// Who may call MPI, and the lock that serialises Tributary's calls. One per Context (its
// network services derive from it); the reduction core reads it through its host, so it
// needs nothing else of the Context on the poll path.
#pragma once

#include <mutex>
#include <string>
#include <thread>

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_MPI
#include <mpi.h>
#endif

namespace tributary::detail {

struct MpiAccess {
  /// The thread that created the Context: below MPI_THREAD_SERIALIZED the only one that
  /// may call MPI, and so the only one that may call the Context's objects.
#if TRIBUTARY_HAVE_MPI
  int thread_level = MPI_THREAD_SINGLE;
#endif
  std::thread::id owner_thread;
  /// Serialises every MPI call Tributary makes (MPI_THREAD_SERIALIZED suffices). The
  /// reductions' own calls (LockMpi) lock only at MPI_THREAD_SERIALIZED: with
  /// MPI_THREAD_MULTIPLE each object's state has its own lock, and below SERIALIZED
  /// CheckThread admits the Context's thread alone. The shared control plane always locks.
  std::mutex mpi_mutex;
  bool serialize_mpi = true;
  std::unique_lock<std::mutex> LockMpi() {
    return serialize_mpi ? std::unique_lock<std::mutex>(mpi_mutex)
                         : std::unique_lock<std::mutex>(mpi_mutex, std::defer_lock);
  }
  /// Whether MPI may be called from this thread (CheckThread without the exception).
  bool MayCallMpi() const noexcept {
#if TRIBUTARY_HAVE_MPI
    return thread_level >= MPI_THREAD_SERIALIZED || std::this_thread::get_id() == owner_thread;
#else
    return true;
#endif
  }
  /// Throws UsageError, naming `rank`, when MPI may not be called from this thread.
  void CheckThread(int rank) const;
  /// The UsageError of a call from a thread that may not call MPI, naming `who`.
  [[noreturn]] void ThrowWrongThread(const std::string& who) const;
};

/// True once MPI_Finalize has been called (always false in the serial build).
bool MpiFinalized() noexcept;

#if TRIBUTARY_HAVE_MPI
/// Why MPI's thread level `level` does not let another thread call MPI, and what to do
/// (the end of the thread rule's UsageError).
std::string ThreadLevelAdvice(int level);
#endif

}  // namespace tributary::detail
