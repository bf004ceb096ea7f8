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

/// How much the ranks check that they start each generation alike (docs/reductions.md,
/// "Ranks that disagree"); a difference fails the generation on every rank.
enum class DebugLevel {
  none,   ///< No cross-rank checks.
  basic,  ///< Default: what rides on rounds sent anyway: lengths and the agreement record of
          ///< variable-size values and exact sums, the record's hash in packed messages.
  full    ///< Before every generation, one small extra round compares the whole record:
          ///< operator, element type, count, collective, root, determinism mode, object.
};

/// What happens when a task fails or the watchdog fires on one rank.
enum class FailurePolicy {
  abort,     ///< Default: print the report, then MPI_Abort (no rank is left hanging).
  propagate  ///< Tell every rank; their reductions and executors fail with the report.
};

/// Who advances reductions between the user's polls.
enum class ProgressPolicy {
  polling,  ///< Default: CheckReduce and Context::Progress (the executor's hook) advance.
  thread    ///< Also a Tributary thread that calls Progress() in a loop; needs
            ///< MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE, and pays off only when each
            ///< rank has a spare core.
};

/// Whether the MPI library is handed device memory directly (docs/device.md, "Values in
/// device memory").
enum class DeviceAwareMpi {
  off,    ///< Default: values in device memory travel through a host copy.
  on,     ///< The user asserts the library reads device memory (e.g. a CUDA-aware build).
  detect  ///< Ask the library at run time (Open MPI's MPIX_Query_cuda_support /
          ///< MPIX_Query_rocm_support, MPICH's MPIX_GPU_query_support) for the Kokkos
          ///< backend in use; false where the backend has no device memory.
};

/// Receives errors that cannot be thrown (destructors, finalisation order). The default
/// prints the message to stderr and calls MPI_Abort (in the serial build it ends the process
/// with exit code 1).
using ErrorHandler = std::function<void(const std::string& message)>;

/// Options of a Context. All ranks must pass the same values.
struct ContextOptions {
  /// Determinism mode of the Context's reductions (each object may override it with
  /// SetDeterminism); docs/determinism.md.
  Determinism determinism = Determinism::fast;
  /// Cross-rank checks.
  DebugLevel debug = DebugLevel::basic;
  /// Communicators for the MPI library's schedule (`mpi_library`), whose collectives need an
  /// order that agrees on every rank: the objects in the first this many slots (by creation
  /// order) each have one and run the library's schedule where it is chosen; the others run
  /// one of Tributary's own schedules there instead (TRIBUTARY_LOG=selection says which).
  /// There is no limit on live objects. The first is the Context's own communicator; each
  /// further one is an MPI_Comm_dup made with the Context. 0: no object uses the library.
  int communicator_pool = 1;
  /// After this long without completing, a generation is reported by the watchdog (which
  /// lists and ranks have not contributed; each rank's state), and so is a poll that has
  /// waited this long for a start; zero disables it. Under SimGrid SMPI it counts simulated
  /// time, and the task watchdog of Execute(tasks) is off (it can only read the wall clock).
  std::chrono::duration<double> watchdog{60};
  /// What the watchdog does: report once and keep waiting (default), or fail the
  /// generation by `on_failure` (abort, or propagate to every rank).
  WatchdogAction on_watchdog = WatchdogAction::report;
  /// Receives the watchdog's reports under WatchdogAction::report (also the task
  /// watchdog's, in Execute without an executor); empty writes them to stderr.
  std::function<void(const std::string& report)> report_handler;
  /// How failures on one rank reach the others.
  FailurePolicy on_failure = FailurePolicy::abort;
  /// Errors that cannot be thrown go here; empty means the default (message + abort).
  ErrorHandler error_handler;
  /// Network schedule for each collective. Empty (the default): the selection tree
  /// chooses per start. Set: this schedule always, with `schedule_params`.
  std::optional<ScheduleKind> allreduce_schedule;
  /// The same for Reduce.
  std::optional<ScheduleKind> reduce_schedule;
  /// The same for AllGather.
  std::optional<ScheduleKind> allgather_schedule;
  /// Parameters of the schedules set above (the tree's leaves carry their own).
  ScheduleParams schedule_params;
  /// A selection tree file (docs/selection.md) replacing the built-in tree. Empty: the
  /// environment variable TRIBUTARY_SELECTION, else the built-in tree. Read on rank 0 and
  /// broadcast; an invalid file makes the constructor throw UsageError on every rank.
  std::string selection_file;
  /// Nodes for the two-level form (ScheduleParams::node_aware): 0 groups the ranks that
  /// share memory (MPI_Comm_split_type); N > 0 makes every N consecutive ranks a virtual
  /// node (to try the form on one machine). The node communicators are created with the
  /// Context when node_aware is set or ranks_per_node > 0.
  int ranks_per_node = 0;
  /// Within a node of three or more ranks, combine a commutative operator in the order of
  /// the cores the ranks are bound to (hwloc: ranks that share a core, cache, NUMA domain
  /// or package combine first), the leader first; non-commutative operators always combine
  /// in rank order. Needs hwloc and bound ranks (e.g. mpiexec --bind-to core); costs one
  /// more communicator per node where the order differs from rank order.
  bool hardware_node_order = true;
  /// Device memory to the MPI library: only AllReduce / Reduce values in device memory
  /// (StageThroughHost), with a builtin operator in Determinism::fast, on the MPI library's
  /// schedule; every other generation still goes through host memory. All ranks must agree:
  /// `detect` takes the answer of every rank (one MPI_Allreduce at construction).
  DeviceAwareMpi device_aware_mpi = DeviceAwareMpi::off;
  /// Progress policy: polling only, or also a progress thread.
  ProgressPolicy progress = ProgressPolicy::polling;
  /// The pause of the progress thread between its passes.
  std::chrono::microseconds progress_interval{20};
  /// A timeline of this Context's reductions (docs/timeline.md): a file prefix P, and
  /// each rank writes P.RANK.json in the Chrome trace-event format (Perfetto,
  /// chrome://tracing; scripts/trace-timeline.sh merges and draws them), completed when
  /// the Context is destroyed. Empty: the environment variable TRIBUTARY_TRACE, else no
  /// timeline.
  std::string trace;
};

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
