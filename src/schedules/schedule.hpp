// The schedule seam, private to the library: the network phase of a reduction is an object
// that CheckReduce advances. A schedule knows who talks to whom in which round and moves
// bytes; what the bytes mean is told by the Payload (element size, combine function).
// Schedules never block. Not installed: users name schedules by ScheduleKind only.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "tributary/config.hpp"
#include "tributary/detail/payload.hpp"
#include "tributary/schedule_kind.hpp"

#if TRIBUTARY_HAVE_MPI
#include <mpi.h>
#endif

namespace tributary {
namespace detail {

/// Told of a schedule's rounds (ScheduleArgs::rounds): the messages it posts and when all
/// it posted has completed. The timeline implements it (src/trace.hpp); schedules only call.
class RoundObserver {
 public:
  /// A message of `bytes` bytes posted to (send) or from (receive) rank `peer`.
  virtual void Post(int peer, std::size_t bytes, bool send) = 0;
  /// Every message posted so far has completed.
  virtual void Completed() = 0;

 protected:
  RoundObserver() = default;
  RoundObserver(const RoundObserver&) = default;
  RoundObserver& operator=(const RoundObserver&) = default;
  ~RoundObserver() = default;
};

#if TRIBUTARY_HAVE_MPI
/// How the ranks of a communicator group into nodes, for the two-level form. Owned by the
/// Context (built once, collectively).
struct NodeLayout {
  MPI_Comm node = MPI_COMM_NULL;     ///< The ranks of this rank's node, in rank order.
  MPI_Comm leaders = MPI_COMM_NULL;  ///< One rank per node (its lowest); null elsewhere.
  /// The node's ranks with the leader first and the others in the order of the hardware
  /// they are bound to (hwloc), for commutative combines; null where that is rank order,
  /// unknown, or ContextOptions::hardware_node_order is off.
  MPI_Comm by_hardware = MPI_COMM_NULL;
  int count = 1;           ///< Number of nodes.
  int largest = 1;         ///< Ranks on the largest node.
  int size = 1;            ///< Ranks of the communicator.
  bool contiguous = true;  ///< Every node is a contiguous range of ranks, in node order.
  /// Blocked layouts (node i holds ranks i * stride .. i * stride + stride - 1; the last may
  /// hold fewer) need no table: stride > 0. Otherwise stride is 0 and the tables hold, per
  /// rank of the communicator, its node and its rank within its node.
  int stride = 0;
  std::vector<int> node_of;
  std::vector<int> local_of;
  /// The node of rank `r` of the communicator.
  int NodeOf(int r) const noexcept {
    return stride > 0 ? r / stride : node_of[static_cast<std::size_t>(r)];
  }
  /// The rank of `r` within its node.
  int LocalOf(int r) const noexcept {
    return stride > 0 ? r % stride : local_of[static_cast<std::size_t>(r)];
  }
};
#endif

/// Where a schedule runs and on which buffers.
struct ScheduleArgs {
  Collective collective = Collective::allreduce;
  int root = 0;  ///< reduce only.
#if TRIBUTARY_HAVE_MPI
  MPI_Comm comm = MPI_COMM_NULL;  ///< Own schedules: the Context's point-to-point comm;
                                  ///< MPI-library path: the object's pool communicator.
  /// The node layout (two-level form); null when the Context has none.
  const NodeLayout* nodes = nullptr;
#endif
  int tag = 0;  ///< Own schedules use tags tag .. tag + kTagsPerSchedule - 1 only.
  /// allreduce: in and out, in place. reduce: in; the result is written here on the root
  /// (other ranks' data may be overwritten as scratch). allgather: this rank's count
  /// elements.
  void* data = nullptr;
  /// reduce, the root only: this rank's contribution when it is not `data` (it is left
  /// unchanged and `data` receives the result only, as with MPI_Reduce's separate buffers).
  /// Null: the contribution is in `data`. ReductionCore copies it into `data` before a
  /// schedule that does not take it (AcceptsInput).
  const void* input = nullptr;
  /// allgather only: size*count elements, in rank order.
  void* result = nullptr;
  Payload payload;
  ScheduleParams params;
  /// allreduce, optional: see Finisher and Schedule::Finished.
  Finisher finisher;
  /// Who is told of the rounds (the timeline, ContextOptions::trace); null when off.
  RoundObserver* rounds = nullptr;
};

/// Number of consecutive tags a schedule may use, starting at ScheduleArgs::tag.
/// Offsets 0-3 carry the schedules' own messages, 4 the node-aware hand-over (on the node
/// communicator), 5-7 the pre-round that checks lengths and agrees on exact-sum windows.
inline constexpr int kTagsPerSchedule = 8;

/// The network phase of one generation of one reduction.
class Schedule {
 public:
  virtual ~Schedule() = default;
  /// Posts the first messages. Never blocks.
  virtual void Start() = 0;
  /// Advances; returns true once this rank's part is complete (its result is in place and
  /// every send it posted has completed). Never blocks. Throws tributary::MpiError.
  virtual bool Progress() = 0;
  /// The algorithm, for logs.
  virtual ScheduleKind Kind() const noexcept = 0;
  /// True when the completed generation left every element finished in args.finisher.out
  /// (its `data` then holds scratch); false when the caller still has to finish `data`.
  virtual bool Finished() const noexcept { return false; }
  /// Prepares this completed schedule for the next generation with `args`, instead of a new
  /// object; returns false when it cannot (then the caller makes a new one).
  virtual bool Rearm(const ScheduleArgs& args) {
    (void)args;
    return false;
  }
#if TRIBUTARY_HAVE_MPI
  /// Ends a schedule in flight whose generation failed: cancels the receives still pending
  /// (after a failure every rank drops the messages nobody asks for, so the sends complete
  /// too). Progress is not called again; Quiet says when nothing is pending. Returns false
  /// where the requests cannot be cancelled (the MPI library's collectives).
  virtual bool Cancel() noexcept = 0;
  /// Tests the requests still pending (never waits); true once none is.
  virtual bool Quiet() noexcept = 0;
#endif
};

#if TRIBUTARY_HAVE_MPI
/// Cancel and Quiet over an array of requests (null ones skipped).
void CancelRequests(MPI_Request* requests, std::size_t n) noexcept;
bool RequestsQuiet(MPI_Request* requests, std::size_t n) noexcept;
#endif

/// Makes the schedule `kind` for `args`. Throws tributary::UsageError when the kind does
/// not implement args.collective, or the payload is not commutative and the kind is not
/// order-keeping.
std::unique_ptr<Schedule> MakeSchedule(ScheduleKind kind, const ScheduleArgs& args);
/// Whether the schedule may write `args.data` on rank `rank` of `size` (the ranks of
/// args.comm). A reduce's ranks other than the root keep their data unchanged, so the
/// reduction layer copies it first only where this is true: not on the leaves of the
/// k-nomial trees and the chain, which only send, and never for the MPI library.
bool WritesData(ScheduleKind kind, const ScheduleArgs& args, int rank, int size);

}  // namespace detail
}  // namespace tributary
