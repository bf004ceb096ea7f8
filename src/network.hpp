// The Context's network services: its communicators (the one for Tributary's own schedules
// and the control plane, the pool's lanes for the MPI library's schedule), the node layout,
// the MPI thread rules and the lock that serialises calls, and the tag space. One per
// Context (ContextImpl::net); set up by the Context's constructor (context.cpp), the rest
// in network.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "schedules/schedule.hpp"
#include "tributary/config.hpp"

namespace tributary::detail {

/// The tags of the Context's communicator: block 0 (tags 0 .. kTagsPerSchedule - 1) is the
/// control plane's, which uses its first tag; reduction object `slot` and generation g use
/// block 1 + slot * kGenerationsInTag + g % kGenerationsInTag, so consecutive generations of
/// an object never share tags (Network::TagFor).
inline constexpr int kControlTag = 0;
/// Block 0's upper tags (kStartupTag ..): the agreement on node facts while the Context is
/// created.
inline constexpr int kStartupTag = 4;
inline constexpr int kGenerationsInTag = 4;

struct Network {
  /// The thread that created the Context: below MPI_THREAD_SERIALIZED the only one that
  /// may call MPI.
  std::thread::id owner_thread;
  /// Communicators this Context made (Context::CommunicatorsCreated).
  int comms_created = 0;
  /// ContextOptions::device_aware_mpi resolved (every rank agrees).
  bool mpi_reads_device = false;
#if TRIBUTARY_HAVE_MPI
  MPI_Comm user = MPI_COMM_NULL;
  /// The Context's one communicator: Tributary's own schedules and the control plane, told
  /// apart by tag, and the MPI library's collectives of the object in slot 0.
  MPI_Comm comm = MPI_COMM_NULL;
  /// Communicators for the MPI library's schedule, one per slot below
  /// ContextOptions::communicator_pool: lanes[0] is `comm`, the others are duplicates.
  /// Objects in higher slots run Tributary's own schedules where the library's is chosen.
  std::vector<MPI_Comm> lanes;
  int thread_level = MPI_THREAD_SINGLE;
  int tag_ub = 32767;
  /// Node layout for the two-level form; null unless the options or the selection need it.
  std::unique_ptr<NodeLayout> nodes;

  /// The communicator of the MPI library's schedule for `slot`; MPI_COMM_NULL beyond the
  /// pool.
  MPI_Comm LaneFor(int slot) const noexcept {
    return slot >= 0 && slot < static_cast<int>(lanes.size())
               ? lanes[static_cast<std::size_t>(slot)]
               : MPI_COMM_NULL;
  }
  /// Frees every communicator this Context made (not after MPI_Finalize).
  void Free() noexcept;
#endif

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

  /// The tag base of a generation of the object in `slot` (own schedules).
  static int TagFor(int slot, std::uint64_t generation) noexcept;
  /// The most slots the tag space holds.
  int MaxSlots() const noexcept;
  /// Whether MPI may be called from this thread (CheckThread without the exception).
  bool MayCallMpi() const noexcept;
  /// Throws UsageError, naming `rank`, when MPI may not be called from this thread.
  void CheckThread(int rank) const;
  /// The UsageError of a call from a thread that may not call MPI, naming `who`.
  [[noreturn]] void ThrowWrongThread(const std::string& who) const;
};

#if TRIBUTARY_HAVE_MPI
/// Why MPI's thread level `level` does not let another thread call MPI, and what to do
/// (the end of CheckThread's UsageError).
std::string ThreadLevelAdvice(int level);
#endif

/// True once MPI_Finalize has been called (always false in the serial build).
bool MpiFinalized() noexcept;

}  // namespace tributary::detail
