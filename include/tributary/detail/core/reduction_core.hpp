// The type-erased engine behind every reduction object: the state machine (idle,
// collecting, in flight, done, failed), the generation counter, contribution counting, the
// network phase and the error paths. The typed objects (AllReduce<T>, ...) own the values
// and tell the core where the bytes are and how they combine.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/reduction_core.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tributary/config.hpp"
#include "tributary/detail/core/agreement_record.hpp"
#include "tributary/detail/core/kept_buffer.hpp"
#include "tributary/detail/core/message_spec.hpp"
#include "tributary/detail/core/payload.hpp"
#include "tributary/phase.hpp"
#include "tributary/schedule_kind.hpp"
#include "tributary/tasks/task_status.hpp"

namespace tributary {
class Context;

namespace detail {

class Tracer;         // the timeline (ContextOptions::trace; src/core/trace.hpp)
class ReductionHost;  // what the core needs of its Context (src/core/reduction_host.hpp)
struct MpiAccess;     // the thread rule and the MPI lock (src/platform/mpi_access.hpp)
class Message;        // the message unit: encodings, agreement, retry (src/core/message.hpp)
class ScheduleRun;    // the object's running schedule (src/selection/schedule_service.hpp)

/// The lock of one reduction object. Every poll takes it (a try_lock, so that one thread
/// advances the object at a time); with std::mutex the unlock, an atomic read-modify-write,
/// was a sixth of a batch cycle's profile at 2 ranks. Here unlock is a release store.
/// Critical sections are short; a contended lock() yields between attempts.
class ObjectLock {
 public:
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void lock() noexcept {
    while (!try_lock()) std::this_thread::yield();
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

/// The states of one reduction object (the public tributary::Phase).
using Phase = tributary::Phase;

/// What the core calls back in the object that owns it (AllReduce, Reduce, AllGather,
/// Batch), only while that object is alive: it detaches itself (ReductionCore::Retire)
/// before it goes.
class ReductionClient {
 public:
  /// The network phase has completed on this rank: the result goes where the object keeps
  /// it. May throw (a UsageError or RemoteError), which fails the generation.
  virtual void FinishGeneration() = 0;
  /// Every list has contributed, but work the object queued (device partials) may still
  /// run: false while it runs (never blocks); otherwise the object launches its network
  /// phase and returns true.
  virtual bool LaunchWhenReady() { return true; }
  /// A failed generation's collective that cannot be cancelled may still read or write the
  /// object's buffer that starts at `at` (the data, input or result of its launch): the
  /// object gives that buffer's storage up, to be kept until the process ends, and holds a
  /// copy of it in its place (or makes a new one at its next launch). Null where it has no
  /// such buffer or cannot give it up (then the collective is waited for). Called with the
  /// core's lock held, also from Retire.
  virtual std::unique_ptr<KeptBuffer> LeaveBuffer(const void* at) noexcept {
    (void)at;
    return nullptr;
  }

 protected:
  ReductionClient() = default;
  ReductionClient(const ReductionClient&) = default;
  ReductionClient& operator=(const ReductionClient&) = default;
  virtual ~ReductionClient() = default;
};

class ReductionCore {
 public:
  /// Registers an object of kind `what` (e.g. "AllReduce<double>") with `ctx`; takes the
  /// lowest free slot of the Context.
  ReductionCore(Context& ctx, std::string what, std::string label);
  ~ReductionCore();
  ReductionCore(const ReductionCore&) = delete;
  ReductionCore& operator=(const ReductionCore&) = delete;

  /// The thread rule of every entry point (docs/reductions.md, "Threads"): below
  /// MPI_THREAD_SERIALIZED only the thread that created the Context may call; another
  /// thread's call is a UsageError thrown before anything changes. Also refuses every call
  /// that needs the Context once it has been destroyed.
  void CheckCaller() const;

  /// Starts a new generation expecting `expected` lists on this rank, each contributing
  /// `per_list` times (a batch: once per member). Throws UsageError unless the object is
  /// idle, done or failed.
  void Arm(int expected, int per_list = 1);
  /// Records the contribution of list `list_index`; returns true for the last one, whose
  /// caller then combines and calls Launch. Throws UsageError for an index out of range, a
  /// second contribution from one list, or a contribution while not collecting.
  bool Arrive(int list_index);
  /// Records `count` contributions of list `list_index` at once (a batch's hand-wired
  /// start: every member from list 0); returns true when they were the last ones.
  bool Arrive(int list_index, int count);
  /// Arrive in two steps, for callers that write the list's slot in between: Claim checks
  /// and reserves the contribution (the same UsageErrors as Arrive, thrown before anything
  /// changes, so a refused contribution never touches a slot); Commit counts it and
  /// returns true for the last one.
  void Claim(int list_index, int count = 1);
  bool Commit(int count = 1);
  /// Starts the network phase (collecting -> in flight).
  void Launch(const LaunchSpec& spec);
  /// Marks this generation failed on this rank without a network phase (used when the
  /// object cannot take part); CheckReduce then throws `error`.
  void FailLocally(const std::string& error);

  /// The poll: complete once the result is in place; incomplete while collecting or in
  /// flight, and inside an executor's cycle (CurrentCycle) while the last generation
  /// started and completed in an earlier cycle. Throws UsageError before any start;
  /// rethrows the generation's error. An incomplete answer also advances another
  /// operation in flight on the Context (detail/core/progress.hpp).
  TaskStatus Check();
  /// Check for generation `generation`: incomplete while it has not started (it is the
  /// next one); UsageError for an earlier or a later generation.
  TaskStatus Check(std::uint64_t generation);
  /// Advances the network phase without throwing (errors are kept for Check). Called by
  /// Context::Progress. Returns true when the object is no longer in flight.
  bool Advance() noexcept;

  /// Who to call back (the object that owns this core; again after it moved).
  void SetClient(ReductionClient* client) noexcept;
  /// Every list has contributed; the network phase starts once the client's
  /// LaunchWhenReady says its queued work is done. Check polls it (one caller at a time).
  void AwaitClient() noexcept { awaiting_.store(true, std::memory_order_release); }
  bool AwaitingClient() const noexcept { return awaiting_.load(std::memory_order_acquire); }
  /// Polls LaunchWhenReady once; true when the network phase has been launched. Never
  /// blocks: false also when another thread is polling.
  bool PollClient();
  /// Fails the current generation (collecting or in flight) with `error` of the given kind
  /// on this rank. Nothing more is sent for it: a network phase in flight is cancelled
  /// (Settle), and its result is discarded on every rank. Returns false when there was
  /// nothing to fail.
  bool FailGeneration(const std::string& error, bool remote, int origin) noexcept;
  /// After a failure: cancels the pending receives of a failed generation's network phase
  /// and tests what is left; true once nothing of it is pending. Never blocks.
  bool Settle() noexcept;
  /// The object that owns this core goes: no more calls back into it, and its network
  /// phase ends before its buffers do. A generation in flight is completed while the other
  /// ranks take part in it (up to the Context's drain time); one that does not complete is
  /// a failure of this rank by the failure policy (abort, or propagate and cancel). Drives
  /// this object alone and the Context's control messages, never another object.
  void Retire() noexcept;
  /// The Context goes first: ends this object's network phase as Retire does, after which
  /// the object is inert (every call throws UsageError naming the destroyed Context).
  void RetireForContext() noexcept;
  /// True while a network phase still runs (in flight, or a failed generation draining).
  bool NetworkActive() const noexcept;
  /// True when CheckReduce already tested the network in executor sweep `sweep`.
  bool PolledInSweep(std::uint64_t sweep) const noexcept {
    return last_poll_sweep_.load(std::memory_order_relaxed) == sweep;
  }

  /// The generation a poll waits to see started (a check inside a cycle before the cycle's
  /// start, or CheckGeneration of the next generation): above Generation() while it has not
  /// started; 0 or at most Generation() otherwise. For the watchdog.
  std::uint64_t AwaitedGeneration() const noexcept {
    return awaited_.load(std::memory_order_relaxed);
  }

  Phase State() const noexcept { return phase_.load(std::memory_order_acquire); }
  std::uint64_t Generation() const noexcept { return generation_.load(std::memory_order_acquire); }
  int Expected() const noexcept { return expected_; }
  /// The cycle (detail::CycleStamp) the current generation was armed for.
  std::uint64_t ArmedCycle() const noexcept { return armed_cycle_.load(std::memory_order_relaxed); }
  /// List indices that have not contributed in this generation.
  std::vector<int> MissingLists() const;
  /// "AllReduce<double> 'dt' (object 3)".
  std::string Name() const;
  /// "AllReduce<double> 'dt' (object 3), generation 7, rank 1".
  std::string Where() const;
  /// The schedule of the current (or last) generation.
  ScheduleKind ScheduleUsed() const noexcept;
  /// A one-line status for the watchdog.
  std::string Status() const;
  int ObjectId() const noexcept { return id_; }
  /// The object's slot on its Context (the lowest free one at construction, so the same on
  /// every rank): its tags, and its communicator for the MPI library's schedule where the
  /// slot is below ContextOptions::communicator_pool (not a list's partial slot).
  int PoolSlot() const noexcept { return pool_slot_; }
  /// Whether this object has a communicator for the MPI library's schedule; without one it
  /// runs Tributary's own schedules where the library's is chosen.
  bool HasLibraryLane() const noexcept;
  Context* Ctx() const noexcept { return ctx_; }
  /// Seconds since this generation was armed.
  double SecondsArmed(std::chrono::steady_clock::time_point now) noexcept;

 private:
  enum class ErrorKind : std::uint8_t { none, usage, remote, mpi, watchdog };
  bool AdvanceLocked();
  bool SettleLocked() noexcept;
  // A collective left pending: the object's buffers it uses, given up to `kept`; false
  // where one of them is not (it is then waited for).
  bool LeavePendingBuffers(KeptBuffers* kept) noexcept;
  void Finish();
  void SetError(ErrorKind kind, std::string text, int origin) noexcept;
  void FailWithRequestsPending(ErrorKind kind, std::string text) noexcept;
  [[noreturn]] void ThrowError() const;
  [[noreturn]] void ThrowOrphaned() const;

  Context* ctx_;         // null once the Context has gone (Orphan)
  ReductionHost* host_;  // what this core may ask of its Context; null likewise
  MpiAccess* mpi_;       // the host's thread rule and MPI lock; null likewise
  std::string what_;
  std::string label_;
  int rank_ = 0;
  int size_ = 1;
  int id_ = -1;
  int pool_slot_ = -1;
  Tracer* trace_ = nullptr;  // the Context's timeline; null when it has none

  std::atomic<Phase> phase_{Phase::idle};
  std::atomic<std::uint64_t> generation_{0};
  int expected_ = 0;
  int per_list_ = 1;
  std::atomic<int> arrived_{0};
  std::unique_ptr<std::atomic<std::uint32_t>[]>
      arrived_flags_;  // per list (a batch: up to its member count)
  int flags_capacity_ = 0;
  std::atomic<std::int64_t> armed_at_{0};  // steady_clock ticks; 0: not yet seen by the watchdog
  std::atomic<std::uint64_t> last_poll_sweep_{0};
  // The cycles (detail::CycleStamp) in which the generation was armed and completed.
  std::atomic<std::uint64_t> armed_cycle_{0};
  std::atomic<std::uint64_t> done_cycle_{0};
  bool Stale() const noexcept;
  TaskStatus CheckCurrent();
  TaskStatus Incomplete();
  // A poll that waits for generation `generation` to start: recorded for the watchdog;
  // throws the Context's failure, after which no start will come.
  TaskStatus AwaitStart(std::uint64_t generation);
  std::atomic<std::uint64_t> awaited_{0};
  std::atomic<unsigned> idle_polls_{0};

  ObjectLock mutex_;
  // The generation's message (its bytes, the agreement rounds, the retry) and its schedule.
  std::unique_ptr<Message> message_;
  std::unique_ptr<ScheduleRun> run_;

  ErrorKind error_kind_ = ErrorKind::none;
  std::string error_;
  int error_origin_ = -1;

  // Ends the network phase before the object or the Context goes (Retire).
  void EndNetworkPhase() noexcept;
  // Waits (polling this object and the Context's control messages) until `done` or the
  // Context's drain time has passed; true when done.
  template <class Done>
  bool DriveUntil(Done done) noexcept;
  // Context code must not be entered from here after this: the object is inert.
  void Orphan() noexcept;
  std::atomic<bool> draining_{false};  // failed, but network requests are still pending
  bool cancelled_ = false;             // a draining generation's receives were cancelled
  ReductionClient* client_ = nullptr;
  // The same object while Retire ends the network phase (no result goes to it then, but a
  // collective left pending may take its buffers: LeaveBuffer).
  ReductionClient* owner_ = nullptr;
  std::atomic<bool> awaiting_{false};
  std::atomic<bool> polling_{false};
};

}  // namespace detail
}  // namespace tributary
