// What the reduction core knows of schedules: what a generation's schedule is chosen on
// (ScheduleRequest), the choice (ScheduleDecision, made by the Context's ScheduleService),
// and the object's running schedule (ScheduleRun), kept and re-armed across generations.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "schedules/schedule.hpp"
#include "tributary/detail/core/kept_buffer.hpp"
#include "tributary/schedule_kind.hpp"
#include "tributary/selection.hpp"

namespace tributary::detail {

/// What a generation's schedule is chosen on: the same on every rank.
struct ScheduleRequest {
  Collective collective = Collective::allreduce;
  std::size_t bytes = 0;  ///< Of the message (a packed one's header included).
  bool builtin_op = false;
  bool commutative = true;
  int determinism = 0;
  bool device_memory = false;  ///< The MPI library reads device memory (its schedule only).
};

/// A choice and why it was not the tree's, for the log.
struct ScheduleDecision {
  SelectionChoice choice;
  const char* note = "";
};

#if TRIBUTARY_HAVE_MPI
/// One object's schedule: made for a generation, or the last one re-armed.
class ScheduleRun {
 public:
  /// Starts `kind` on `args` (rank `rank` of `size`). `read_only`: a reduce's data that
  /// must stay unchanged, copied first where the schedule writes it. `args` is the
  /// caller's to give up: the buffers it names may be replaced (a staging copy).
  void Start(ScheduleKind kind, ScheduleArgs& args, bool read_only, int rank, int size);
  /// Advances; true once this rank's part is complete. Never blocks.
  bool Progress() { return schedule_->Progress(); }
  /// The completed schedule rounded the exact records itself (Schedule::Finished).
  bool Finished() const noexcept { return schedule_->Finished(); }
  /// True between Start and Stop.
  bool Active() const noexcept { return active_; }
  void Stop() noexcept { active_ = false; }
  /// A failed generation's schedule: cancels its receives (false where it cannot be
  /// cancelled: the MPI library's collectives); Quiet says when nothing is pending any more
  /// (the run is then stopped).
  bool Cancel() noexcept { return !active_ || schedule_->Cancel(); }
  bool Quiet() noexcept;
  /// Lets a schedule in flight go without freeing it (its requests may still write).
  void Release() noexcept;
  /// The buffers a schedule in flight uses (Schedule::InUse).
  PendingBuffers InUse() const noexcept { return active_ ? schedule_->InUse() : PendingBuffers{}; }
  /// The copy of a read-only `data` (Start) where it starts at `at`, given up (null if not).
  std::unique_ptr<KeptBuffer> LeaveStaging(const void* at) noexcept;
  /// A failed generation's schedule that cannot be cancelled: where `whole`, every buffer of
  /// the object's its requests use is in `kept` (InUse), and the schedule and those buffers
  /// are kept alive until the process ends, its requests left pending, and the run stopped;
  /// true then (or when nothing runs). Otherwise only `kept` is kept (given up already, MPI
  /// may still write it) and the schedule stays: false.
  bool Abandon(KeptBuffers kept, bool whole) noexcept;
  /// Lets go of what a completed schedule keeps for its next generation (see
  /// Schedule::DropKept).
  void DropKept(bool call_mpi) noexcept {
    if (schedule_ && !active_) schedule_->DropKept(call_mpi);
  }

 private:
  std::unique_ptr<Schedule> schedule_;  // kept after completion, re-armed when it can be
  std::vector<unsigned char> staging_;  // a read-only `data` copied for a schedule that writes
  bool active_ = false;
};
#else
class ScheduleRun {};  // nothing runs without MPI
#endif

}  // namespace tributary::detail
