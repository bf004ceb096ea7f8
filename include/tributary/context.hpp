// tributary::Context: where reductions live. It wraps the user's communicator, owns every
// communicator Tributary uses (created collectively once — one by default — and freed
// before MPI_Finalize), the options, and the bookkeeping of live reduction objects.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tributary/config.hpp"
#include "tributary/context_options.hpp"
#include "tributary/determinism.hpp"
#include "tributary/schedule_kind.hpp"
#include "tributary/selection.hpp"
#include "tributary/tasks/task_status.hpp"
#include "tributary/tasks/watchdog.hpp"

#if TRIBUTARY_HAVE_MPI
#include <mpi.h>
#endif

namespace tributary {

class TaskCollection;
class Executor;
class Context;

namespace detail {
class ReductionCore;
struct ContextImpl;
ContextImpl& StateOf(Context& ctx) noexcept;
}  // namespace detail

/// Owns the communicators and the bookkeeping of a group of reductions. Constructing and
/// destroying a Context are collective over its communicator. Objects and their Context may
/// be destroyed in any order, after any outcome, also after MPI_Finalize: a network phase
/// still running ends with the first of them to go (docs/reductions.md, "Lifetimes"), and
/// objects that outlive their Context are inert (their calls throw UsageError).
///
/// Threads: Tributary serialises its own MPI calls with a lock, so MPI_THREAD_SERIALIZED is
/// enough for objects polled from several threads (ThreadedExecutor); with a lower level
/// every call of the Context and its objects must come from the thread that created the
/// Context, at every rank count (another thread's call is a UsageError that says so and
/// changes nothing).
class Context {
 public:
  /// A Context over MPI_COMM_WORLD (the single process in the serial build).
  explicit Context(ContextOptions options = {});
#if TRIBUTARY_HAVE_MPI
  /// A Context over `comm` (not owned; it must outlive the Context).
  explicit Context(MPI_Comm comm, ContextOptions options = {});
#endif
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// This process's rank in the Context's communicator.
  int Rank() const noexcept;
  /// The number of ranks of the Context's communicator.
  int Size() const noexcept;
  /// The options the Context was created with.
  const ContextOptions& Options() const noexcept;
  /// The selection tree pruned for this communicator and `collective`.
  const SelectionTree& Selection(Collective collective) const noexcept;
  /// The facts the selection tree was pruned with.
  const SelectionFacts& Facts() const noexcept;

  /// Advances every reduction in flight, runs the watchdog and receives failure notices
  /// from other ranks. Register it as an executor's progress hook; Execute() does so.
  /// Throws RemoteError when another rank reported a failure (FailurePolicy::propagate).
  void Progress();

  /// Polls `objects` (reductions, gathers, batches: anything with CheckReduce()) and
  /// advances everything in flight on this Context until every one is complete; the
  /// watchdog applies. Rethrows an object's error. For drivers with their own loops and
  /// for a rank that has no lists but takes part in the collectives.
  template <class... Objects>
  void Wait(Objects&... objects) {
    for (;;) {
      bool all = true;
      ((all = objects.CheckReduce() == TaskStatus::complete && all), ...);
      if (all) return;
      Progress();
    }
  }
  /// Advances everything in flight on this Context until nothing is: every network phase
  /// started here has completed (their objects' CheckReduce then returns complete or throws
  /// the generation's error). Generations still collecting contributions are not waited for.
  /// After a failure (FailurePolicy::propagate) the failed generations' messages are settled
  /// (within the drain time, ContextOptions::watchdog) and then the failure is thrown
  /// (RemoteError naming the rank where it happened), as Progress throws it.
  void WaitAll();

  /// Runs `tasks` on `executor` with Progress() as progress hook and applies the failure
  /// policy: on a failed task (an exception, a task returning fail, the task watchdog),
  /// `abort` prints the report and aborts every rank; `propagate` tells the other ranks and
  /// throws: a task's own exception where it was thrown, RemoteError elsewhere (naming the
  /// rank that failed, with the report). The watchdog's report names the incomplete tasks
  /// and every object they wait for, with each rank's state, whichever watchdog fires.
  /// Before it returns, a generation armed for this run that expects no contribution on
  /// this rank (a rank with no lists: `Expect(0)`) has completed, so that its result is in
  /// `val` here as on the ranks whose lists polled it. Throws the failure at once on a
  /// Context that has failed.
  TaskStatus Execute(TaskCollection& tasks, Executor& executor);
  /// Runs `tasks` on a serial executor (see the other overload) whose task watchdog has the
  /// Context's time, action and report handler.
  TaskStatus Execute(TaskCollection& tasks);

  /// Reports `message` as a failure of this rank according to the failure policy (abort,
  /// or tell the other ranks). Used by Execute; callable by drivers with their own loops.
  void ReportFailure(const std::string& message);

  /// Passes an error that cannot be thrown (a destructor's) to the error handler.
  void HandleError(const std::string& message) noexcept;

  /// Number of reduction objects currently alive on this Context.
  int LiveObjects() const noexcept;
  /// Number of nodes of the two-level form (1 when the Context has no node layout).
  int NodeCount() const noexcept;
  /// Whether this rank's node combines commutative operators in hardware order
  /// (ContextOptions::hardware_node_order and a binding that differs from rank order).
  bool NodeInHardwareOrder() const noexcept;
  /// Whether values in device memory go to the MPI library directly (the option `on`, or
  /// `detect` where every rank's library said yes).
  bool MpiReadsDeviceMemory() const noexcept;
  /// Number of communicators this Context has created so far (constant after construction).
  int CommunicatorsCreated() const noexcept;

#if TRIBUTARY_HAVE_MPI
  /// The user's communicator.
  MPI_Comm Comm() const noexcept;
#endif

 private:
  friend detail::ContextImpl& detail::StateOf(Context& ctx) noexcept;
  std::unique_ptr<detail::ContextImpl> impl_;
};

}  // namespace tributary
