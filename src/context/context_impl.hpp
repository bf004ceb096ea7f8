// The Context's private state, by concern: the network services (network.hpp), the
// registry of what it advances (registry.hpp), the control plane between ranks
// (control_plane.hpp) and the schedule choice (schedule_service.hpp), with the identity and
// options they share; and the host its reduction objects' cores see (reduction_host.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "context/control_plane.hpp"
#include "context/registry.hpp"
#include "core/reduction_host.hpp"
#include "platform/network.hpp"
#include "platform/node_layout.hpp"
#include "schedules/schedule.hpp"
#include "selection/schedule_service.hpp"
#include "tributary/context_options.hpp"
#include "tributary/detail/core/reduction_core.hpp"

namespace tributary {
class Context;  // the public class whose state this is (tributary/context.hpp)
}  // namespace tributary

namespace tributary::detail {

/// The Context's state. It is the host of its reduction objects (ReductionHost): what their
/// cores may ask of it is that interface, never these members.
struct ContextImpl final : ReductionHost {
  ContextOptions options;
  ErrorHandler handler;
  int rank = 0;
  int size = 1;

  Network net;
  Registry registry;
  ControlPlane control{options, net, registry, rank, size};
  /// Which schedule each generation runs, and where (schedule_service.cpp).
  ScheduleService schedules{options, net, size};
  /// This Context's observer of foreign cycles (the end of a ForeignCycle completes the
  /// generations no list of this rank polls, as Execute does).
  int cycle_observer = 0;
  /// The Context whose state this is (Progress, the timeline).
  Context* self = nullptr;

  // ReductionHost: what a reduction object's core may ask.
  int Rank() const noexcept override { return rank; }
  int Size() const noexcept override { return size; }
  const ContextOptions& Options() const noexcept override { return options; }
  /// Gives `core` an object id and the lowest free slot (the same on every rank, objects
  /// being created in the same order). Throws UsageError only where the MPI library's tag
  /// space (MPI_TAG_UB) has no room for another slot.
  void Register(ReductionCore* core, int* id, int* slot) override;
  void Unregister(ReductionCore* core) noexcept override;
  bool HasLane(int slot) const noexcept override { return schedules.HasLane(slot); }
  MpiAccess& Mpi() noexcept override { return net; }
  bool Failed() const noexcept override { return control.Failed(); }
  int FailureOrigin() const noexcept override { return control.FailureOrigin(); }
  std::string FailureText() const override { return control.FailureText(); }
  /// A failure of this rank, by the failure policy: `abort` prints the report and ends the
  /// job; `propagate` tells every rank and fails every current generation here.
  void FailByPolicy(const std::string& message, int abort_code = 1) override;
  /// Reports an error that cannot be thrown.
  void HandleError(const std::string& message) noexcept override;
  /// How long the end of a network phase waits for the other ranks (an object or the
  /// Context destroyed while one runs): the watchdog's time, or 60 s without a watchdog.
  std::chrono::duration<double> DrainTime() const noexcept override;
  /// The control messages only (failure notices, watchdog queries; after a failure, the
  /// messages that arrive unasked): what waiting for one object's network phase needs of
  /// the Context, without advancing any other object. Never throws.
  void ServiceControl() noexcept override { control.ServiceOnce(); }
  ScheduleDecision Choose(const ScheduleRequest& request, int slot) const override {
    return schedules.Choose(request, slot);
  }
  SelectionChoice AgreementSchedule() const noexcept override {
    return schedules.AgreementSchedule();
  }
  bool LogsChoices() const noexcept override { return schedules.Logging(); }
  void LogChoice(const std::string& where, const ScheduleRequest& request,
                 const ScheduleDecision& decision) const override {
    schedules.Log(where, request, decision);
  }
#if TRIBUTARY_HAVE_MPI
  MPI_Comm Comm() const noexcept override { return net.comm; }
  void Place(ScheduleKind kind, int slot, std::uint64_t generation,
             ScheduleArgs* args) const override {
    schedules.Place(kind, slot, generation, args);
  }
#endif
  void AdvanceOthers(const void* self_object) noexcept override;
  void ProgressAll() override;
  bool ExecutorsHooked() const noexcept override {
    return registry.hooked_runs.load(std::memory_order_relaxed) > 0;
  }
  Tracer* TracerFor(int object, const std::string& name) override;

#if TRIBUTARY_HAVE_MPI
  /// Starts the progress thread; throws UsageError where it cannot call MPI.
  void StartProgressThread(Context* ctx);
#endif
  /// Whether a generation armed for cycle `first_cycle` or later, expecting no contribution
  /// on this rank, is still in flight (no list of this rank polls it).
  bool UnpolledLeft(std::uint64_t first_cycle);
  /// Advances the Context (ctx.Progress: it may throw the failure) until none is left.
  void CompleteUnpolled(Context& ctx, std::uint64_t first_cycle);
  /// detail::CycleEndFn of every Context: CompleteUnpolled for the foreign cycle that ended.
  static void ForeignCycleEnded(void* self, std::uint64_t cycle) noexcept;
#if TRIBUTARY_HAVE_MPI
  /// The destruction of a failed Context: the messages of its failed generations are
  /// dropped on every rank until every rank's have left (ControlPlane::SettleBarrier).
  void SettleAfterFailure() noexcept;
#endif
};

/// The state of `ctx` (for the Context's own units; context.cpp).
ContextImpl& StateOf(Context& ctx) noexcept;

#if TRIBUTARY_HAVE_MPI
/// ContextOptions::device_aware_mpi resolved: `on`, or `detect` where every rank's MPI
/// library accepts device memory of the Kokkos backend in use (collective over `comm`).
/// device_aware_mpi.cpp.
bool ResolveDeviceAwareMpi(MPI_Comm comm, DeviceAwareMpi option);

/// The selection tree of a Context: the options' file, else TRIBUTARY_SELECTION, else the
/// built-in tree (*builtin set: the single-machine tree, which the Context swaps for the
/// cluster tree where the communicator spans nodes); read on rank 0 and broadcast. Throws
/// UsageError on every rank for an unreadable or invalid file. selection_source.cpp.
SelectionTree LoadSelection(MPI_Comm comm, int rank, const std::string& option, bool* builtin);
#else
SelectionTree LoadSelection(const std::string& option);
#endif

}  // namespace tributary::detail
