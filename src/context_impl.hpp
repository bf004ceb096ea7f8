// The Context's private state, by concern: the network services (network.hpp), the
// registry of what it advances (registry.hpp), the control plane between ranks
// (control_plane.hpp) and the schedule choice (schedule_service.hpp), with the identity and
// options they share.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "control_plane.hpp"
#include "network.hpp"
#include "registry.hpp"
#include "schedule_service.hpp"
#include "schedules/schedule.hpp"
#include "tributary/context.hpp"
#include "tributary/detail/reduction_core.hpp"

namespace tributary::detail {

struct ContextImpl {
  ContextOptions options;
  ErrorHandler handler;
  int rank = 0;
  int size = 1;

  Network net;
  Registry registry;
  ControlPlane control{*this};

  /// The selection tree pruned per collective (allreduce, reduce, allgather), its facts,
  /// and whether TRIBUTARY_LOG asks for one line per choice.
  SelectionTree selection[3];
  SelectionFacts facts;
  bool log_selection = false;
  /// Which schedule each generation runs, and where (schedule_service.cpp).
  ScheduleService schedules{*this};
  /// This Context's observer of foreign cycles (the end of a ForeignCycle completes the
  /// generations no list of this rank polls, as Execute does).
  int cycle_observer = 0;

  /// Registers `core`: gives it an object id and the lowest free slot (the same on every
  /// rank, objects being created in the same order). Throws UsageError only where the MPI
  /// library's tag space (MPI_TAG_UB) has no room for another slot.
  void Register(ReductionCore* core, int* id, int* slot);
  void Unregister(ReductionCore* core) noexcept;
  /// Whether the object in `slot` may run the MPI library's schedule (a lane of the pool).
  bool HasLane(int slot) const noexcept;
#if TRIBUTARY_HAVE_MPI
  /// Starts the progress thread; throws UsageError where it cannot call MPI.
  void StartProgressThread(Context* ctx);
#endif
  /// Reports an error that cannot be thrown.
  void HandleError(const std::string& message) noexcept;
  /// A failure of this rank, by the failure policy: `abort` prints the report and ends the
  /// job; `propagate` tells every rank and fails every current generation here.
  void FailByPolicy(const std::string& message, int abort_code = 1);
  /// Whether a generation armed for cycle `first_cycle` or later, expecting no contribution
  /// on this rank, is still in flight (no list of this rank polls it).
  bool UnpolledLeft(std::uint64_t first_cycle);
  /// Advances the Context (ctx.Progress: it may throw the failure) until none is left.
  void CompleteUnpolled(Context& ctx, std::uint64_t first_cycle);
  /// detail::CycleEndFn of every Context: CompleteUnpolled for the foreign cycle that ended.
  static void ForeignCycleEnded(void* self, std::uint64_t cycle) noexcept;
  /// How long the end of a network phase waits for the other ranks (an object or the
  /// Context destroyed while one runs): the watchdog's time, or 60 s without a watchdog.
  std::chrono::duration<double> DrainTime() const noexcept;
  /// The control messages only (failure notices, watchdog queries; after a failure, the
  /// messages that arrive unasked): what waiting for one object's network phase needs of
  /// the Context, without advancing any other object. Never throws.
  void ServiceControl() noexcept;
#if TRIBUTARY_HAVE_MPI
  /// The destruction of a failed Context: the messages of its failed generations are
  /// dropped on every rank until every rank's have left (a non-blocking barrier).
  void SettleAfterFailure() noexcept;
#endif
};

/// Tributary's own schedule where the MPI library's is chosen for an object without a
/// communicator of the pool (ContextOptions::communicator_pool): order-keeping, for
/// `collective` on `bytes` bytes.
SelectionChoice LibraryStandIn(Collective collective, std::size_t bytes) noexcept;

/// The watchdog's clock: steady_clock, or under SimGrid SMPI the simulated time.
std::chrono::steady_clock::time_point WatchdogClock() noexcept;

#if TRIBUTARY_HAVE_MPI
/// ContextOptions::device_aware_mpi resolved: `on`, or `detect` where every rank's MPI
/// library accepts device memory of the Kokkos backend in use (collective over `comm`).
/// device_aware_mpi.cpp.
bool ResolveDeviceAwareMpi(MPI_Comm comm, DeviceAwareMpi option);

/// The node layout of `comm`: shared-memory groups, or virtual nodes of `per_node` ranks;
/// hardware order within a node where asked (NodeLayout::by_hardware). Collective; counts
/// the communicators it makes in `created`. node_layout.cpp.
std::unique_ptr<NodeLayout> MakeNodeLayout(MPI_Comm comm, int rank, int size, int per_node,
                                           bool hardware_order, int* created);
/// Frees the layout's communicators.
void FreeNodeLayout(NodeLayout* nodes) noexcept;
/// Ranks per node (the largest node) and node count, from the layout or, where `needed`,
/// from a temporary shared-memory split of `comm` (counted in `created`, freed at once)
/// and messages on `p2p` at the tags of kStartupTag. Collective.
SelectionFacts NodeFacts(MPI_Comm comm, MPI_Comm p2p, int size, const NodeLayout* nodes,
                         bool needed, int* created);

/// The selection tree of a Context: the options' file, else TRIBUTARY_SELECTION, else the
/// built-in tree (*builtin set: the single-machine tree, which the Context swaps for the
/// cluster tree where the communicator spans nodes); read on rank 0 and broadcast. Throws
/// UsageError on every rank for an unreadable or invalid file. selection_source.cpp.
SelectionTree LoadSelection(MPI_Comm comm, int rank, const std::string& option, bool* builtin);
#else
SelectionTree LoadSelection(const std::string& option);
#endif

/// Ends the whole job after a report: prints `text` to stderr, gives the launcher a moment
/// to forward it (MPICH's Hydra drops a dying rank's unread output when it tears the job
/// down), then MPI_Abort on the context's user communicator (MPI_COMM_WORLD without a
/// context) when MPI is live, or _Exit.
[[noreturn]] void AbortJob(const ContextImpl* context, int code, const std::string& text) noexcept;

}  // namespace tributary::detail
