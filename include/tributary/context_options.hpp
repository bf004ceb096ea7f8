// tributary::ContextOptions: what a Context is made with — the checks across ranks, the
// failure policy, progress, device-aware MPI, the selection, the watchdog and the timeline.
// Apart from the Context so that the parts that read options do not see the Context.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "tributary/config.hpp"
#include "tributary/determinism.hpp"
#include "tributary/schedule_kind.hpp"
#include "tributary/selection.hpp"
#include "tributary/tasks/watchdog.hpp"

namespace tributary {

/// How much the ranks check that they start each generation alike (docs/reductions.md,
/// "Ranks that disagree"); a difference fails the generation on every rank.
enum class DebugLevel {
  none,   ///< No cross-rank checks.
  basic,  ///< Default: what rides on messages sent anyway: the agreement record's hash in
          ///< packed messages, with the length of an AllReduce's variable-size value from
          ///< its second generation; a round of lengths and record for other variable-size
          ///< values and exact sums.
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

}  // namespace tributary
