#include "tributary/detail/core/reduction_core.hpp"

#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <sstream>

#include "core/message.hpp"
#include "core/reduction_host.hpp"
#include "core/schedule_run.hpp"
#include "core/trace.hpp"
#include "tributary/context_options.hpp"
#include "tributary/detail/core/progress.hpp"
#include "tributary/errors.hpp"
#include "tributary/tasks/sweep.hpp"

namespace tributary {

const char* ToString(Phase p) noexcept {
  switch (p) {
    case Phase::idle:
      return "idle";
    case Phase::collecting:
      return "collecting";
    case Phase::in_flight:
      return "in flight";
    case Phase::done:
      return "done";
    case Phase::failed:
      return "failed";
  }
  return "unknown";
}

}  // namespace tributary

namespace tributary::detail {

ReductionCore::ReductionCore(Context& ctx, std::string what, std::string label)
    : ctx_(&ctx),
      host_(&HostOf(ctx)),
      mpi_(&host_->Mpi()),
      what_(std::move(what)),
      label_(std::move(label)),
      rank_(host_->Rank()),
      size_(host_->Size()) {
  host_->Register(this, &id_, &pool_slot_);
  trace_ = host_->TracerFor(id_, Name());
  message_ =
      std::make_unique<Message>(Name(), HashText(label_.c_str(), HashText(what_.c_str()) * 31));
#if TRIBUTARY_HAVE_MPI
  run_ = std::make_unique<ScheduleRun>();
#endif
}

ReductionCore::~ReductionCore() {
  Retire();           // the owner retires the core first; a core that goes on its own does it here
  if (!ctx_) return;  // the Context went first and ended the network phase
  ReductionHost& host = *host_;
#if TRIBUTARY_HAVE_MPI
  // After MPI_Finalize the MPI library has let go of everything: nothing is left to free.
  // A persistent request goes before the datatype it was made on; on a thread that may not
  // call MPI both are left to MPI_Finalize.
  if (!MpiFinalized()) {
    const bool may_call = size_ == 1 || mpi_->MayCallMpi();
    run_->DropKept(may_call);
    if (may_call) (void)message_->FreeMpiObjects();
  }
#endif
  host.Unregister(this);
}

void ReductionCore::SetClient(ReductionClient* client) noexcept {
  std::lock_guard<ObjectLock> lock(mutex_);
  client_ = client;
  owner_ = client;
}

void ReductionCore::Retire() noexcept {
  {
    std::lock_guard<ObjectLock> lock(mutex_);
    client_ = nullptr;
  }
  if (ctx_) EndNetworkPhase();
  std::lock_guard<ObjectLock> lock(mutex_);
  owner_ = nullptr;
}

void ReductionCore::RetireForContext() noexcept {
  EndNetworkPhase();
#if TRIBUTARY_HAVE_MPI
  run_->DropKept(true);  // before the Context frees the communicator it was made on
#endif
  Orphan();
}

void ReductionCore::Orphan() noexcept {
  std::lock_guard<ObjectLock> lock(mutex_);
  ctx_ = nullptr;
  host_ = nullptr;
  mpi_ = nullptr;
  trace_ = nullptr;
}

template <class Done>
bool ReductionCore::DriveUntil(Done done) noexcept {
  ReductionHost& host = *host_;
  const auto limit =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(host.DrainTime());
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= limit) return false;
    host.ServiceControl();  // failure notices (and, after a failure, unasked messages)
    std::this_thread::yield();
  }
}

void ReductionCore::EndNetworkPhase() noexcept {
  if (!NetworkActive()) return;
  ReductionHost& host = *host_;
#if TRIBUTARY_HAVE_MPI
  if (MpiFinalized()) {
    // MPI_Finalize was called while this network phase ran: its requests are gone with the
    // library, which may have written the buffers until then but cannot any more.
    host.HandleError(Where() +
                     ": MPI_Finalize was called while its network phase was in flight; "
                     "complete every generation before finalising MPI");
    run_->Release();
    message_->Release();
    draining_ = false;
    phase_.store(Phase::failed, std::memory_order_release);
    return;
  }
  if (size_ > 1 && !mpi_->MayCallMpi()) {
    host.HandleError(Where() + ": destroyed in flight on a thread that may not call MPI (" +
                     ThreadLevelAdvice(mpi_->thread_level) + ")");
    run_->Release();
    message_->Release();
    return;
  }
#endif
  if (State() == Phase::in_flight) {
    // A healthy generation: complete it while the other ranks take part (the result is
    // dropped where the object has gone). One that does not complete in the drain time is
    // a failure of this rank.
    const bool completed = DriveUntil([this] {
      Advance();
      return State() != Phase::in_flight;
    });
    if (!completed) {
      host.FailByPolicy(Where() +
                        ": destroyed while its network phase is in flight, which did "
                        "not complete within " +
                        std::to_string(host.DrainTime().count()) +
                        " s (another rank has not started this generation, or no longer polls "
                        "its Context)");
    }
  }
  if (!draining_.load()) return;
  // A failed generation: cancel its receives; its sends complete as the other ranks drop
  // what they receive unasked.
  if (DriveUntil([this] { return Settle(); })) return;
  host.HandleError(Where() + ": after a failure its sends did not complete within " +
                   std::to_string(host.DrainTime().count()) +
                   " s (the other ranks no longer poll their Context); the MPI library may "
                   "still use the object's buffers");
#if TRIBUTARY_HAVE_MPI
  run_->Release();
  message_->Release();
  if (mpi_) {  // a combine the library still runs finds no layout
    auto mpi = mpi_->LockMpi();
    message_->LeavePackedType();
  }
#endif
  draining_ = false;
}

bool ReductionCore::HasLibraryLane() const noexcept { return host_ && host_->HasLane(pool_slot_); }

std::string ReductionCore::Name() const {
  std::string n = what_;
  if (!label_.empty()) n += " '" + label_ + "'";
  return n + " (object " + std::to_string(id_) + ")";
}

std::string ReductionCore::Where() const { return GenerationWhere(Name(), Generation(), rank_); }

std::vector<int> ReductionCore::MissingLists() const {
  std::vector<int> missing;
  if (State() != Phase::collecting) return missing;
  for (int i = 0; i < expected_; ++i)
    if (static_cast<int>(arrived_flags_[static_cast<std::size_t>(i)].load(
            std::memory_order_acquire)) < per_list_)
      missing.push_back(i);
  return missing;
}

bool ReductionCore::PollClient() {
  bool idle = false;
  if (!polling_.compare_exchange_strong(idle, true, std::memory_order_acq_rel)) return false;
  struct Release {
    std::atomic<bool>& flag;
    ~Release() { flag.store(false, std::memory_order_release); }
  } release{polling_};
  if (!AwaitingClient()) return State() != Phase::collecting;
  if (!client_ || State() != Phase::collecting) {  // detached, or failed meanwhile
    awaiting_.store(false, std::memory_order_release);
    return true;
  }
  bool launched = false;
  try {
    launched = client_->LaunchWhenReady();
  } catch (...) {
    awaiting_.store(false, std::memory_order_release);
    throw;
  }
  if (launched) awaiting_.store(false, std::memory_order_release);
  return launched;
}

std::string ReductionCore::Status() const {
  std::ostringstream s;
  const Phase p = State();
  s << "generation " << Generation() << " " << ToString(p);
  if (p == Phase::collecting && AwaitingClient()) {
    s << " (all " << expected_ << " lists contributed; waiting for their device work)";
  } else if (p == Phase::collecting) {
    s << ": " << (expected_ - static_cast<int>(MissingLists().size())) << " of " << expected_
      << " lists contributed, missing lists:";
    for (int i : MissingLists()) s << " " << i;
  } else if (p == Phase::in_flight) {
    s << " (all " << expected_ << " lists contributed; waiting for other ranks)";
  }
  return s.str();
}

double ReductionCore::SecondsArmed(std::chrono::steady_clock::time_point now) noexcept {
  // The watchdog's first look stamps the generation (no clock read on the start path); it
  // looks at least every 64th Context::Progress call.
  std::int64_t armed = armed_at_.load(std::memory_order_relaxed);
  if (armed == 0) {
    armed = now.time_since_epoch().count();
    armed_at_.store(armed, std::memory_order_relaxed);
  }
  return std::chrono::duration<double>(now.time_since_epoch() -
                                       std::chrono::steady_clock::duration(armed))
      .count();
}

bool ReductionCore::NetworkActive() const noexcept {
  return State() == Phase::in_flight || draining_.load(std::memory_order_acquire);
}

void ReductionCore::CheckCaller() const {
  if (!ctx_) ThrowOrphaned();
  if (!mpi_->MayCallMpi()) mpi_->ThrowWrongThread(Where());
}

void ReductionCore::Arm(int expected, int per_list) {
  CheckCaller();
  ReductionHost& host = *host_;
  if (host.Failed())  // nothing starts on a failed Context: its failure says why
    throw RemoteError(host.FailureOrigin(), "cannot start " + Name() + ": " + host.FailureText());
  const Phase p = State();
  if (p == Phase::collecting || p == Phase::in_flight)
    throw UsageError(Where() + ": started again while the generation is still " + ToString(p) +
                     "; wait until CheckReduce returns complete");
  if (draining_.load()) {
    Settle();
    if (draining_.load())
      throw UsageError(Where() +
                       ": started again while the network phase of its failed generation is "
                       "still completing");
  }
  if (expected < 0)
    throw UsageError(Where() + ": expected contributions must be >= 0, not " +
                     std::to_string(expected));
  std::lock_guard<ObjectLock> lock(mutex_);
  ++generation_;
  expected_ = expected;
  per_list_ = per_list;
  if (expected > flags_capacity_) {
    arrived_flags_ =
        std::make_unique<std::atomic<std::uint32_t>[]>(static_cast<std::size_t>(expected));
    flags_capacity_ = expected;
  }
  for (int i = 0; i < expected; ++i)
    arrived_flags_[static_cast<std::size_t>(i)].store(0, std::memory_order_relaxed);
  arrived_.store(0, std::memory_order_relaxed);
  awaiting_.store(false, std::memory_order_relaxed);
  error_kind_ = ErrorKind::none;
  error_.clear();
  error_origin_ = -1;
  armed_at_.store(0, std::memory_order_relaxed);
  last_poll_sweep_.store(0, std::memory_order_relaxed);
  armed_cycle_.store(CycleStamp(), std::memory_order_relaxed);
  if (trace_) trace_->Arm(id_, generation_, expected);
  awaited_.store(0, std::memory_order_relaxed);
  phase_.store(Phase::collecting, std::memory_order_release);
}

bool ReductionCore::Arrive(int list_index) { return Arrive(list_index, 1); }

bool ReductionCore::Arrive(int list_index, int count) {
  Claim(list_index, count);
  return Commit(count);
}

void ReductionCore::Claim(int list_index, int count) {
  CheckCaller();
  const Phase p = State();
  if (p != Phase::collecting) {
    if (p == Phase::failed) ThrowError();
    throw UsageError(Where() + ": list " + std::to_string(list_index) + " contributed while the " +
                     "object is " + ToString(p) +
                     (p == Phase::idle || p == Phase::done
                          ? "; arm the generation first (Expect or StartReduce)"
                          : ""));
  }
  if (list_index < 0 || list_index >= expected_)
    throw UsageError(Where() + ": contribution from list index " + std::to_string(list_index) +
                     " is out of range; this generation expects " + std::to_string(expected_) +
                     " contribution(s), lists 0.." + std::to_string(expected_ - 1));
  // A compare-exchange, not an add: a refused contribution leaves the count untouched.
  auto& flag = arrived_flags_[static_cast<std::size_t>(list_index)];
  std::uint32_t seen = flag.load(std::memory_order_acquire);
  do {
    if (static_cast<int>(seen) + count > per_list_)
      throw UsageError(Where() + ": list " + std::to_string(list_index) +
                       " contributed twice in one generation; the second contribution was "
                       "refused and changed nothing");
  } while (!flag.compare_exchange_weak(seen, seen + static_cast<std::uint32_t>(count),
                                       std::memory_order_acq_rel, std::memory_order_acquire));
  if (trace_) trace_->Contribute(id_, Generation(), list_index);
}

bool ReductionCore::Commit(int count) {
  const bool last =
      arrived_.fetch_add(count, std::memory_order_acq_rel) + count == expected_ * per_list_;
  if (last && trace_) trace_->LastArrival(id_, Generation());
  return last;
}

void ReductionCore::Launch(const LaunchSpec& spec) {
  std::lock_guard<ObjectLock> lock(mutex_);
  if (State() == Phase::failed) ThrowError();  // failed while the last list combined
  if (State() != Phase::collecting)
    throw UsageError(Where() + ": network phase launched while " + ToString(State()));
  Message::Env env;
  env.host = host_;
  env.slot = pool_slot_;
  env.generation = Generation();
  env.rank = rank_;
  env.size = size_;
  env.trace = trace_;
  env.object = id_;
#if TRIBUTARY_HAVE_MPI
  env.run = run_.get();
  std::unique_lock<std::mutex> mpi;
  if (size_ > 1) {
    mpi_->CheckThread(rank_);
    mpi = mpi_->LockMpi();
  }
#endif
  // From here the message unit runs the launch up to the first message (the choice of the
  // schedule, the agreement round or the schedule's start); its errors fail the generation
  // on this rank alike: the options' refusals are the same on every rank.
  try {
    message_->Launch(spec, env);
  } catch (const MpiError& e) {
    SetError(ErrorKind::mpi, Where() + ": " + e.what(), rank_);
    phase_.store(Phase::failed, std::memory_order_release);
    throw;
  } catch (const UsageError& e) {
    SetError(ErrorKind::usage, Where() + ": " + e.what(), rank_);
    phase_.store(Phase::failed, std::memory_order_release);
    throw UsageError(error_);
  }
  phase_.store(Phase::in_flight, std::memory_order_release);
}

ScheduleKind ReductionCore::ScheduleUsed() const noexcept { return message_->ScheduleUsed(); }

bool ReductionCore::AdvanceLocked() {
  const bool draining = draining_.load();
  if (!draining && State() != Phase::in_flight) return true;
  if (trace_) trace_->Advancing(id_);
#if TRIBUTARY_HAVE_MPI
  if (size_ > 1) {
    mpi_->CheckThread(rank_);
    auto mpi = mpi_->LockMpi();
    if (draining) return SettleLocked();
    // The message's steps (agreement rounds, the schedule, a retry) until one has to wait.
    Message::Next next = Message::Next::wait;
    if (message_->Waiting()) {
      next = message_->Poll(false);
      if (next == Message::Next::wait) return false;
      if (next == Message::Next::schedule) message_->StartSchedule();
    }
    if (next != Message::Next::finished && next != Message::Next::failed && run_->Active()) {
      message_->ProgressBeside();  // a length check running beside the schedule, if any
      if (!run_->Progress()) return false;
      run_->Stop();
      next = message_->Completed(run_->Finished(), false);
      if (next == Message::Next::wait) return false;  // the ranks agree on a window again
    }
    if (next == Message::Next::failed) {
      SetError(ErrorKind::usage, Where() + ": " + message_->Error(), rank_);
      phase_.store(Phase::failed, std::memory_order_release);
      return true;
    }
  }
#endif
  if (draining) return SettleLocked();
  message_->Finish(rank_);
  Finish();
  return true;
}

bool ReductionCore::SettleLocked() noexcept {
#if TRIBUTARY_HAVE_MPI
  if (!cancelled_) {
    cancelled_ = true;
    (void)message_->Cancel();
    (void)run_->Cancel();  // a collective of the MPI library cannot be: it stays pending
  }
  if (!message_->Quiet()) return false;
  // A collective of the MPI library that another rank may never start: left pending with
  // the object's buffers it uses, which their owners (the run, the message, the object) give
  // up; waited for where one cannot be.
  if (!run_->Quiet()) {
    KeptBuffers kept;
    const bool whole = LeavePendingBuffers(&kept);
    if (!run_->Abandon(std::move(kept), whole)) return false;
    message_->LeavePackedType();
  }
#endif
  draining_.store(false, std::memory_order_release);
  return true;
}

#if TRIBUTARY_HAVE_MPI
bool ReductionCore::LeavePendingBuffers(KeptBuffers* kept) noexcept {
  const PendingBuffers in_use = run_->InUse();
  if (in_use.unknown) return false;
  bool whole = true;
  for (const void* at : in_use.at) {
    if (!at) continue;
    std::unique_ptr<KeptBuffer> b = run_->LeaveStaging(at);
    if (!b) b = message_->LeaveBuffer(at);
    // Not device memory, which the object's copy in its place could not be made of.
    if (!b && owner_ && !message_->DeviceMemory()) b = owner_->LeaveBuffer(at);
    if (!b) {
      whole = false;
      continue;
    }
    try {
      kept->push_back(std::move(b));
    } catch (...) {  // no memory: given up already, so left unfreed
      (void)b.release();
    }
  }
  return whole;
}
#endif

bool ReductionCore::Settle() noexcept {
  if (!draining_.load()) return true;
  std::unique_lock<ObjectLock> lock(mutex_, std::try_to_lock);
  if (!lock) return false;  // another thread is advancing it
#if TRIBUTARY_HAVE_MPI
  if (mpi_ && size_ > 1) {
    auto mpi = mpi_->LockMpi();
    return SettleLocked();
  }
#endif
  return SettleLocked();
}

void ReductionCore::Finish() {
  try {
    if (client_) client_->FinishGeneration();
    done_cycle_.store(CycleStamp(), std::memory_order_relaxed);
    if (trace_) trace_->Complete(id_, Generation(), false);
    phase_.store(Phase::done, std::memory_order_release);
  } catch (const RemoteError& e) {
    SetError(ErrorKind::remote, e.what(), e.origin_rank());
    phase_.store(Phase::failed, std::memory_order_release);
  } catch (const std::exception& e) {
    SetError(ErrorKind::usage, e.what(), rank_);
    phase_.store(Phase::failed, std::memory_order_release);
  }
}

bool ReductionCore::Advance() noexcept {
  std::unique_lock<ObjectLock> lock(mutex_, std::try_to_lock);
  if (!lock) return false;  // another thread is advancing it
  try {
    return AdvanceLocked();
  } catch (const UsageError& e) {
    // e.g. a schedule refused after the length check: the same on every rank.
    FailWithRequestsPending(ErrorKind::usage, Where() + ": " + e.what());
    return true;
  } catch (const std::exception& e) {
    FailWithRequestsPending(ErrorKind::mpi, Where() + ": " + e.what());
    return true;
  }
}

// An error while advancing: what the generation posted is cancelled like a failed one's.
void ReductionCore::FailWithRequestsPending(ErrorKind kind, std::string text) noexcept {
  SetError(kind, std::move(text), rank_);
#if TRIBUTARY_HAVE_MPI
  if (run_->Active() || message_->Waiting()) {
    cancelled_ = false;
    draining_.store(true, std::memory_order_release);
  }
#endif
  phase_.store(Phase::failed, std::memory_order_release);
}

// A check in a cycle of an executor whose generation started and completed in an earlier
// cycle: this cycle's start has not come yet (docs/reductions.md, "Cycles").
bool ReductionCore::Stale() const noexcept {
  const std::uint64_t cycle = CurrentCycle();
  return cycle != 0 && armed_cycle_.load(std::memory_order_relaxed) < cycle &&
         done_cycle_.load(std::memory_order_relaxed) < cycle;
}

// An incomplete poll advances another operation of the Context (MPI's progress rule), and
// every 256th the whole Context: the watchdog and failure notices reach a program that
// only ever polls one object.
TaskStatus ReductionCore::Incomplete() {
  if (!ctx_) ThrowOrphaned();
  const unsigned polls = idle_polls_.load(std::memory_order_relaxed) + 1;
  idle_polls_.store(polls, std::memory_order_relaxed);
  if ((polls & 255u) == 0 && mpi_->MayCallMpi() &&
      (CurrentSweep() == 0 || !host_->ExecutorsHooked()))
    host_->ProgressAll();
  else
    host_->AdvanceOthers(this);
  return TaskStatus::incomplete;
}

TaskStatus ReductionCore::AwaitStart(std::uint64_t generation) {
  awaited_.store(generation, std::memory_order_relaxed);
  if (host_ && host_->Failed()) {
    const ReductionHost& host = *host_;
    throw RemoteError(host.FailureOrigin(),
                      Where() + ": polled for generation " + std::to_string(generation) +
                          ", which will not start after the failure: " + host.FailureText());
  }
  return Incomplete();
}

TaskStatus ReductionCore::Check(std::uint64_t generation) {
  if (ctx_) CheckCaller();
  const std::uint64_t current = Generation();
  if (generation == current + 1) return AwaitStart(generation);  // not started yet
  if (generation != current)
    throw UsageError(Where() + ": CheckReduce for generation " + std::to_string(generation) + ": " +
                     (generation < current ? "its result has been replaced by a later generation"
                                           : "generations start one at a time; the next is " +
                                                 std::to_string(current + 1)));
  return CheckCurrent();
}

TaskStatus ReductionCore::Check() {
  if (ctx_) CheckCaller();
  if (State() == Phase::done && CurrentCycle() != 0) {
    // Under the lock Arm and Finish hold, so that the phase and the cycles read belong to
    // one generation (another list's thread may be arming this cycle's).
    bool stale = false;
    {
      std::lock_guard<ObjectLock> lock(mutex_);
      stale = State() == Phase::done && Stale();
    }
    if (stale) return AwaitStart(Generation() + 1);
  }
  return CheckCurrent();
}

void ReductionCore::ThrowOrphaned() const {
  throw UsageError(Name() + ": its Context has been destroyed; nothing can start or complete");
}

TaskStatus ReductionCore::CheckCurrent() {
  const Phase p = State();
  if (p == Phase::done) return TaskStatus::complete;
  if (!ctx_ && p != Phase::failed) ThrowOrphaned();
  if (p == Phase::collecting) {
    if (!AwaitingClient() || !PollClient()) return Incomplete();
    return CheckCurrent();  // launched: test the network phase in this same call
  }
  if (p == Phase::idle) {
    // Inside an executor the start may come from another list later in the cycle (the
    // hand-wired pattern): wait for it, as for any cycle's start.
    if (CurrentCycle() != 0) return AwaitStart(1);
    throw UsageError(Where() +
                     ": CheckReduce called before any StartReduce/Expect; it would otherwise "
                     "report a result that was never computed");
  }
  if (p == Phase::failed) {
    if (draining_) Advance();
    ThrowError();
  }
  // In flight: one real test per sweep; other lists polling in the same sweep see the flag.
  const std::uint64_t sweep = CurrentSweep();
  if (sweep != 0 && last_poll_sweep_.load(std::memory_order_relaxed) == sweep)
    return TaskStatus::incomplete;
  last_poll_sweep_.store(sweep, std::memory_order_relaxed);
  Advance();
  const Phase now = State();
  if (now == Phase::done) return TaskStatus::complete;
  if (now == Phase::failed) ThrowError();
  return Incomplete();
}

void ReductionCore::SetError(ErrorKind kind, std::string text, int origin) noexcept {
  if (trace_) trace_->Complete(id_, Generation(), true);
  error_kind_ = kind;
  error_ = std::move(text);
  error_origin_ = origin;
}

void ReductionCore::ThrowError() const {
  switch (error_kind_) {
    case ErrorKind::remote:
      throw RemoteError(error_origin_, error_);
    case ErrorKind::mpi:
      throw MpiError(0, error_);
    case ErrorKind::watchdog:
      throw RemoteError(error_origin_, error_);
    case ErrorKind::usage:
    case ErrorKind::none:
      break;
  }
  throw UsageError(error_.empty() ? Where() + ": failed" : error_);
}

void ReductionCore::FailLocally(const std::string& error) {
  std::lock_guard<ObjectLock> lock(mutex_);
  SetError(ErrorKind::usage, error, rank_);
  phase_.store(Phase::failed, std::memory_order_release);
}

bool ReductionCore::FailGeneration(const std::string& error, bool remote, int origin) noexcept {
  std::lock_guard<ObjectLock> lock(mutex_);
  const Phase p = State();
  if (p != Phase::collecting && p != Phase::in_flight) return false;
  SetError(remote ? ErrorKind::remote : ErrorKind::watchdog, error, origin);
  awaiting_.store(false, std::memory_order_release);
  if (p == Phase::in_flight) {
    cancelled_ = false;
    draining_.store(true, std::memory_order_release);
  }
  phase_.store(Phase::failed, std::memory_order_release);
  return true;
}

}  // namespace tributary::detail
