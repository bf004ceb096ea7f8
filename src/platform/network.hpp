// The Context's network services: its communicators (the one for Tributary's own schedules
// and the control plane, the pool's lanes for the MPI library's schedule), the node layout,
// the MPI thread rules and the lock that serialises calls (MpiAccess), the tag space. One per
// Context (ContextImpl::net); set up by the Context's constructor (context.cpp), the rest
// in network.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "platform/mpi_access.hpp"
#include "platform/node_layout.hpp"
#include "platform/tags.hpp"
#include "tributary/config.hpp"

namespace tributary::detail {

/// The thread rule and the lock (MpiAccess), and the communicators.
struct Network : MpiAccess {
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

  /// The most slots the tag space holds.
  int MaxSlots() const noexcept;
};

}  // namespace tributary::detail
