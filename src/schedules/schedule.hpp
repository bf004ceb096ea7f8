// The schedule seam, private to the library: the network phase of a reduction is an object
// that CheckReduce advances. A schedule knows who talks to whom in which round and moves
// bytes; what the bytes mean is told by the Payload (element size, combine function).
// Schedules never block. Not installed: users name schedules by ScheduleKind only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "platform/node_layout.hpp"
#include "platform/tags.hpp"
#include "tributary/config.hpp"
#include "tributary/detail/core/payload.hpp"
#include "tributary/schedule_kind.hpp"

#if TRIBUTARY_HAVE_MPI
#include <mpi.h>
#endif

namespace tributary {
namespace detail {

/// Told of a schedule's rounds (ScheduleArgs::rounds): the messages it posts and when all
/// it posted has completed. The timeline implements it (src/core/trace.hpp); schedules only call.
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

/// What a schedule's requests in flight read or write beside the schedule's own buffers
/// (Schedule::InUse): at most two buffers of the object's, by the address each starts at
/// (ScheduleArgs::data, input or result), or `unknown` (any of the object's buffers).
struct PendingBuffers {
  std::array<const void*, 2> at{};
  bool unknown = false;
  /// Only the schedule's own buffers.
  bool OwnOnly() const noexcept { return !unknown && !at[0] && !at[1]; }
};

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
#if TRIBUTARY_HAVE_MPI
  /// MPI-library path: payload.op and payload.elem_type stay valid, and mean the same, for
  /// as long as the object lives (predefined ones, or Tributary's own): a persistent request
  /// may be bound to them. False for a user's MPI_Op or datatype, which the user may free
  /// and make again between generations (a handle could then come back equal on one rank
  /// and not on another), and for device memory handed to the library (a persistent
  /// request's data is copied through host memory).
  bool op_kept = false;
  /// MPI-library path: `data` or `input` cannot be given up to a collective left pending
  /// (LaunchSpec::fixed_storage); the collective runs on a copy of its own.
  bool fixed_storage = false;
  /// Recursive doubling, an allreduce's length speculation on the elements in place (the
  /// length is compared by the messages' sizes instead of a header): while *missed is true
  /// this rank sends empty messages and combines nothing, and a receive of fewer bytes than
  /// it posted sets it, so that every rank learns that one did not fit the agreed length.
  /// The owner sets *missed before the start (true: this rank's value does not fit). Null:
  /// no such signal.
  bool* missed = nullptr;
  /// MPI-library path, an allreduce's length speculation (Message::FlagsMiss): one element
  /// more, of the data's predefined type (of 4 or 8 bytes), combined after `data`'s count by the
  /// same operator. Read at the start; on completion the combined element is written here, and the
  /// result into `data` only where that element equals the one this rank sent (where another rank's
  /// changed it, `data` is left as it was). Null: none.
  void* flag = nullptr;
#endif
};

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
  /// Lets go of the MPI objects a completed schedule keeps for its next generation (a
  /// persistent request): frees them where `call_mpi` (before the Context frees the
  /// communicator they use), else forgets them without calling MPI (the owner is destroyed
  /// on a thread that may not call it). The destructor then frees nothing.
  virtual void DropKept(bool call_mpi) noexcept { (void)call_mpi; }
  /// The buffers the requests in flight use. A failed generation's requests that cannot be
  /// cancelled may be left pending, with the schedule and the object's buffers named here
  /// kept alive (the object gives them up: ReductionClient::LeaveBuffer), while the object
  /// goes.
  virtual PendingBuffers InUse() const noexcept { return PendingBuffers{{}, true}; }
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
