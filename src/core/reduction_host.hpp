// What a reduction object's core needs from its Context, and nothing more: the one narrow
// interface between the reduction core and the Context's private state. The Context
// implements it (ContextImpl); the core holds it from construction until the Context goes.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "core/schedule_run.hpp"
#include "platform/mpi_access.hpp"
#include "tributary/context_options.hpp"

namespace tributary {
class Context;
}  // namespace tributary

namespace tributary::detail {

class ReductionCore;
class Tracer;

class ReductionHost {
 public:
  // Who the objects run with.
  virtual int Rank() const noexcept = 0;
  virtual int Size() const noexcept = 0;
  virtual const ContextOptions& Options() const noexcept = 0;

  // Registration: an object id and the lowest free slot (the same on every rank); the
  // slot's lane of the MPI library's schedule, if it has one.
  virtual void Register(ReductionCore* core, int* id, int* slot) = 0;
  virtual void Unregister(ReductionCore* core) noexcept = 0;
  virtual bool HasLane(int slot) const noexcept = 0;

  // The thread rule and the lock that serialises MPI calls (read on the poll path).
  virtual MpiAccess& Mpi() noexcept = 0;

  // The failure state: whether the Context has failed, where and why; a failure of this
  // rank by the policy; an error that cannot be thrown; how long the end of a network
  // phase waits; the control messages alone (failure notices; after a failure, the
  // messages that arrive unasked).
  virtual bool Failed() const noexcept = 0;
  virtual int FailureOrigin() const noexcept = 0;
  virtual std::string FailureText() const = 0;
  virtual void FailByPolicy(const std::string& message, int abort_code = 1) = 0;
  virtual void HandleError(const std::string& message) noexcept = 0;
  virtual std::chrono::duration<double> DrainTime() const noexcept = 0;
  virtual void ServiceControl() noexcept = 0;

  // Choosing and placing a generation's schedule.
  virtual ScheduleDecision Choose(const ScheduleRequest& request, int slot) const = 0;
  // The schedule of the agreement's rounds (ScheduleService::AgreementSchedule).
  virtual SelectionChoice AgreementSchedule() const noexcept = 0;
  virtual bool LogsChoices() const noexcept = 0;
  virtual void LogChoice(const std::string& where, const ScheduleRequest& request,
                         const ScheduleDecision& decision) const = 0;
#if TRIBUTARY_HAVE_MPI
  /// The Context's communicator (the agreement rounds run on it).
  virtual MPI_Comm Comm() const noexcept = 0;
  virtual void Place(ScheduleKind kind, int slot, std::uint64_t generation,
                     ScheduleArgs* args) const = 0;
#endif

  // The progress rule: another operation in flight advanced in turn, or every one (and the
  // watchdog); whether executors of Context::Execute call the latter after idle sweeps.
  virtual void AdvanceOthers(const void* self) noexcept = 0;
  virtual void ProgressAll() = 0;
  virtual bool ExecutorsHooked() const noexcept = 0;

  // The timeline (ContextOptions::trace) of object `object`, or null.
  virtual Tracer* TracerFor(int object, const std::string& name) = 0;

 protected:
  ReductionHost() = default;
  ReductionHost(const ReductionHost&) = default;
  ReductionHost& operator=(const ReductionHost&) = default;
  virtual ~ReductionHost() = default;
};

/// The host of `ctx`'s objects (context.cpp).
ReductionHost& HostOf(Context& ctx) noexcept;

}  // namespace tributary::detail
