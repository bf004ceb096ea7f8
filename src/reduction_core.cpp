#include "tributary/detail/reduction_core.hpp"

#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <sstream>

#include "agreement.hpp"
#include "context_impl.hpp"
#include "mpi_registry.hpp"
#include "schedules/schedule.hpp"
#include "schedules/simulated_cost.hpp"
#include "trace.hpp"
#include "tributary/context.hpp"
#include "tributary/detail/progress.hpp"
#include "tributary/errors.hpp"
#include "tributary/tasks/sweep.hpp"

namespace tributary::detail {

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

void PackedCombine(const void* state, const void* in, void* inout, std::size_t count) noexcept {
  const auto& layout = *static_cast<const PackedLayout*>(state);
  for (std::size_t k = 0; k < count; ++k) {
    const auto* src = static_cast<const unsigned char*>(in) + k * layout.bytes;
    auto* dst = static_cast<unsigned char*>(inout) + k * layout.bytes;
    PackedHeader hin, hout;
    std::memcpy(&hin, src, sizeof hin);
    std::memcpy(&hout, dst, sizeof hout);
    if (hin.agreement != hout.agreement) {
      // The ranks started the generation differently: the layouts may differ too.
      hout.agreement = PackedHeader::kDisagreed;
      std::memcpy(dst, &hout, sizeof hout);
      continue;
    }
    if (hin.error_rank >= 0 || hout.error_rank >= 0) {
      // A failure upstream: keep the lowest failing rank, skip the combine.
      if (hout.error_rank < 0 || (hin.error_rank >= 0 && hin.error_rank < hout.error_rank))
        hout.error_rank = hin.error_rank;
      std::memcpy(dst, &hout, sizeof hout);
      continue;
    }
    try {
      for (const auto& seg : layout.segments)
        seg.combine(seg.state, src + sizeof(PackedHeader) + seg.offset,
                    dst + sizeof(PackedHeader) + seg.offset, seg.count);
    } catch (const std::exception& e) {
      hout.error_rank = layout.rank;
      if (layout.error_text) *layout.error_text = e.what();
      std::memcpy(dst, &hout, sizeof hout);
    } catch (...) {
      hout.error_rank = layout.rank;
      if (layout.error_text) *layout.error_text = "an exception not derived from std::exception";
      std::memcpy(dst, &hout, sizeof hout);
    }
  }
}

ReductionCore::ReductionCore(Context& ctx, std::string what, std::string label)
    : ctx_(&ctx),
      what_(std::move(what)),
      label_(std::move(label)),
      agreement_(std::make_unique<Agreement>()),
      object_code_(HashText(label_.c_str(), HashText(what_.c_str()) * 31)) {
  ctx.Impl().Register(this, &id_, &pool_slot_);
  trace_ = TraceFor(&ctx, id_, Name());
}

ReductionCore::~ReductionCore() {
  if (!ctx_) return;  // the Context went first and has reported it
  auto& impl = ctx_->Impl();
  if (draining_ || abandon_pending_) {
    // A failed generation still completes its network phase (and the Context launches the
    // deferred ones); give it the watchdog time, or 10 s.
    const auto limit = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           impl.options.watchdog.count() > 0 ? impl.options.watchdog
                                                             : std::chrono::duration<double>(10));
    while ((draining_ || abandon_pending_) && std::chrono::steady_clock::now() < limit) {
      try {
        ctx_->Progress();
      } catch (...) {
      }
      Advance();
    }
  }
  if (NetworkActive()) {
    impl.HandleError(Where() +
                     ": destroyed while its network phase is in flight; wait until "
                     "CheckReduce returns complete before destroying it");
    if (schedule_active_)
      (void)schedule_.release();  // its requests may still write: never free them
#if TRIBUTARY_HAVE_MPI
    if (agreement_pending_) agreement_->Abandon();
#endif
  }
#if TRIBUTARY_HAVE_MPI
  if (packed_type_ != MPI_DATATYPE_NULL) {
    if (MpiFinalized())
      impl.HandleError(Where() + ": destroyed after MPI_Finalize; destroy reductions first");
    else
      MPI_Type_free(&packed_type_);
  }
#endif
  impl.Unregister(this);
}

bool ReductionCore::HasLibraryLane() const noexcept {
  return ctx_ && ctx_->Impl().HasLane(pool_slot_);
}

std::string ReductionCore::Name() const {
  std::string n = what_;
  if (!label_.empty()) n += " '" + label_ + "'";
  return n + " (object " + std::to_string(id_) + ")";
}

std::string ReductionCore::Where() const {
  return Name() + ", generation " + std::to_string(Generation()) + ", rank " +
         std::to_string(ctx_ ? ctx_->Rank() : -1);
}

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
  bool launched = false;
  try {
    launched = ready_(client_);
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
  // looks at least every 16th Context::Progress call.
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
  return State() == Phase::in_flight || draining_ || abandon_pending_;
}

void ReductionCore::Arm(int expected, int per_list) {
  if (!ctx_) throw UsageError(Name() + ": its Context has been destroyed");
  const Phase p = State();
  if (p == Phase::collecting || p == Phase::in_flight)
    throw UsageError(Where() + ": started again while the generation is still " + ToString(p) +
                     "; wait until CheckReduce returns complete");
  if (draining_) {
    Advance();
    if (draining_)
      throw UsageError(Where() +
                       ": started again while the network phase of its failed generation is "
                       "still completing");
  }
  if (expected < 0)
    throw UsageError(Where() + ": expected contributions must be >= 0, not " +
                     std::to_string(expected));
  auto& impl = ctx_->Impl();
  if (impl.failed.load())
    throw RemoteError(impl.failure_origin, "cannot start " + Name() + ": " + impl.failure_text);
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
  if (State() != Phase::collecting)
    throw UsageError(Where() + ": network phase launched while " + ToString(State()));
  spec_ = spec;
  finisher_ = spec_.window ? spec_.window->Rounding() : Finisher{};
  finished_by_schedule_ = false;
  auto& impl = ctx_->Impl();
  try {
    if (!spec_.window) ChooseSchedule();  // exact records: once their size is known
  } catch (const UsageError& e) {         // the same on every rank: the options are
    SetError(ErrorKind::usage, Where() + ": " + e.what(), impl.rank);
    phase_.store(Phase::failed, std::memory_order_release);
    throw UsageError(error_);
  }
  if (trace_) trace_->NetworkStart(id_, Generation(), spec_);
  if (impl.size == 1) {
    if (spec_.window) UsePacked(spec_.window->Pack(spec_.window->Measure(), false));
    const std::size_t bytes = spec_.payload.count * spec_.payload.elem_size;
    if (spec_.input && bytes)
      std::memcpy(spec_.data, spec_.input, bytes);  // the result is the input
    phase_.store(Phase::in_flight, std::memory_order_release);
    return;  // nothing to send: Check finishes at once
  }
#if TRIBUTARY_HAVE_MPI
  impl.CheckThread();
  auto mpi = impl.LockMpi();
  try {
    speculative_ = false;
    const DebugLevel level = impl.options.debug;
    const bool full = level == DebugLevel::full;
    record_hash_ = 0;
    schedule_code_ = 0;
    if (level != DebugLevel::none) {
      // The record is compared wherever a round carries it: the pre-round, or the header of
      // a packed message.
      AgreementRecord record = spec_.agreement;
      if (record.fingerprint) record.op = record.fingerprint(record.client);
      record_op_ = record.op;
      if (spec_.check_length) record.count = 0;  // compared as the length
      record_hash_ = RecordHash(record, object_code_);
      if (!spec_.window) schedule_code_ = ScheduleCode(kind_, params_);
    }
    const WindowNeeds* guess = spec_.window ? spec_.window->Guess() : nullptr;
    if (guess && !spec_.check_length && !full && spec_.collective == Collective::allreduce) {
      // An exact allreduce with a window agreed before. Large messages are written in it
      // while measured, and the agreement follows (the records stand where it agrees on
      // the same window). Others skip the agreement: the records end with a count of the
      // ranks whose data does not fit that window; where it is not zero, every rank
      // agrees on a window and runs the records again (Advance).
      PackedRecords prepacked;
      WindowNeeds measured;
      try {
        prepacked = spec_.window->Prepack(*guess, &measured);
        if (!prepacked.data) UsePacked(spec_.window->Pack(*guess, true));
      } catch (const std::bad_alloc& e) {  // out of memory: fail here; the others wait (watchdog)
        throw UsageError(e.what());
      }
      if (prepacked.data) {  // agree on what was measured while packing
        UsePacked(prepacked);
        StartAgreement(&measured);
      } else {
        speculative_ = true;
        StartSchedule();
      }
    } else if (spec_.check_length || full || spec_.window) {
      StartAgreement();
    } else {
      StartSchedule();
    }
  } catch (const MpiError& e) {
    SetError(ErrorKind::mpi, Where() + ": " + e.what(), impl.rank);
    phase_.store(Phase::failed, std::memory_order_release);
    throw;
  } catch (const UsageError& e) {
    SetError(ErrorKind::usage, Where() + ": " + e.what(), impl.rank);
    phase_.store(Phase::failed, std::memory_order_release);
    throw UsageError(error_);
  }
#endif
  phase_.store(Phase::in_flight, std::memory_order_release);
}

#if TRIBUTARY_HAVE_MPI
// The pre-round (src/agreement.cpp): lengths, the agreement record, the schedule and the
// exact-sum window, in one small allreduce on the point-to-point communicator.
void ReductionCore::StartAgreement(const WindowNeeds* measured) {
  auto& impl = ctx_->Impl();
  Agreement::Input in;
  in.record = record_hash_;
  in.schedule = schedule_code_;
  in.length = static_cast<std::int64_t>(spec_.length);
  in.check_length = spec_.check_length;
  in.window = measured ? *measured : spec_.window ? spec_.window->Measure() : WindowNeeds{};
  ScheduleArgs base;
  base.comm = impl.comm;
  base.tag = impl.TagFor(pool_slot_, Generation());
  agreement_->StartPreRound(in, base);
  agreement_pending_ = true;
}

// The round of the agreement has completed: true when the generation goes on (its schedule
// started), false when it failed or the description round started.
bool ReductionCore::AgreementDone() {
  auto& impl = ctx_->Impl();
  agreement_pending_ = false;
  if (describing_) {
    describing_ = false;
    Disagree(agreement_->Differences());
    return false;
  }
  switch (agreement_->Evaluate()) {
    case Agreement::Verdict::differ: {
      if (draining_) {  // failed already: no description round
        draining_ = false;
        return false;
      }
      // Every rank sees the same hashes: all describe themselves, none starts the reduction.
      const std::string schedule =
          std::string(ToString(kind_)) +
          (TakesRadix(kind_) ? " (radix " + std::to_string(params_.radix) + ")" : std::string()) +
          (params_.node_aware ? " (node-aware)" : "");
      ScheduleArgs base;
      base.comm = impl.comm;
      base.tag = impl.TagFor(pool_slot_, Generation());
      agreement_->StartDescriptions(
          ViewOf(spec_.agreement, record_op_, Name(), object_code_, spec_.length,
                 spec_.check_length, schedule, schedule_code_),
          base);
      agreement_pending_ = describing_ = true;
      return false;
    }
    case Agreement::Verdict::lengths_differ:
      if (draining_) {
        draining_ = false;
        return false;
      }
      // Every rank sees the same max and min: all fail together, none starts the reduction.
      SetError(ErrorKind::usage,
               Where() + ": value lengths differ across ranks: this rank has " +
                   std::to_string(spec_.length) + " element(s); the ranks have between " +
                   std::to_string(agreement_->MinLength()) + " and " +
                   std::to_string(agreement_->MaxLength()),
               impl.rank);
      phase_.store(Phase::failed, std::memory_order_release);
      return false;
    case Agreement::Verdict::agreed:
      break;
  }
  if (spec_.window) {
    try {
      UsePacked(spec_.window->Pack(agreement_->AgreedWindow(impl.size), false));
    } catch (const std::exception& e) {  // out of memory: fail here; the others wait (watchdog)
      SetError(ErrorKind::usage, Where() + ": " + e.what(), impl.rank);
      phase_.store(Phase::failed, std::memory_order_release);
      return false;
    }
  }
  StartSchedule();
  return true;
}

void ReductionCore::Disagree(const std::string& what) {
  SetError(ErrorKind::usage,
           Where() +
               ": the ranks started this generation differently, so none takes a result: " + what +
               (ctx_->Impl().options.debug == DebugLevel::full
                    ? " (checked at DebugLevel::full)"
                    : " (found at DebugLevel::basic; DebugLevel::full checks every generation)"),
           ctx_->Impl().rank);
  phase_.store(Phase::failed, std::memory_order_release);
}

// A speculative exact allreduce has completed: the count of ranks whose data did not fit
// the window (the last record's low digit, summed like the others) decides whether the
// records stand or every rank agrees on a window and runs them again.
bool ReductionCore::SpeculationMissed() const {
  PackedHeader header;  // a user operator threw somewhere: every rank fails, none agrees again
  std::memcpy(&header, spec_.data, sizeof header);
  if (header.error_rank >= 0) return false;
  const PackedSegment& records = spec_.packed->segments.front();
  std::uint32_t misfits = 0;
  if (finished_by_schedule_)  // the finisher copies that record's low digit
    std::memcpy(
        &misfits,
        static_cast<const unsigned char*>(finisher_.out) + (records.count - 1) * finisher_.out_size,
        sizeof misfits);
  else
    std::memcpy(&misfits, Records() + (records.count - 1) * records.elem_size, sizeof misfits);
  return misfits != 0;
}
#endif

const unsigned char* ReductionCore::Records() const {
  return static_cast<const unsigned char*>(spec_.data) + sizeof(PackedHeader) +
         spec_.packed->segments.front().offset;
}

// Exact records the schedule left unrounded: rounded here where the result is wanted.
void ReductionCore::FinishRecords() {
  if (!spec_.window || !finisher_ || finished_by_schedule_) return;
  if (spec_.collective == Collective::reduce && ctx_->Rank() != spec_.root) return;
  finisher_.fn(finisher_.state, Records(), finisher_.out, 0, spec_.packed->segments.front().count);
}

// The schedule of this generation: forced by the options, or chosen by the pruned selection
// tree from inputs that are identical on every rank (the pre-round compares the choice).
void ReductionCore::ChooseSchedule() {
  auto& impl = ctx_->Impl();
  const auto& o = impl.options;
  const std::optional<ScheduleKind>& forced =
      spec_.collective == Collective::reduce      ? o.reduce_schedule
      : spec_.collective == Collective::allgather ? o.allgather_schedule
                                                  : o.allreduce_schedule;
  const std::size_t bytes =
      spec_.packed ? spec_.packed->bytes : spec_.payload.count * spec_.payload.elem_size;
  const bool run_to_run = spec_.determinism == static_cast<int>(Determinism::run_to_run) &&
                          spec_.collective != Collective::allgather;
  if (spec_.device_memory) {
    kind_ = ScheduleKind::mpi_library;
    params_ = ScheduleParams{};
    params_.node_aware = false;
  } else if (forced) {
    kind_ = *forced;
    params_ = o.schedule_params;
    if (run_to_run && kind_ == ScheduleKind::mpi_library)
      throw UsageError(std::string("Determinism::run_to_run cannot use the MPI library's ") +
                       "schedule (its combine order is unspecified); force one of Tributary's " +
                       "own schedules, or leave the choice to the selection tree");
  } else {
    SelectionInput in;
    in.bytes = bytes;
    in.builtin_op = spec_.builtin_op;
    in.commutative = spec_.payload.commutative;
    in.memory = MemorySpace::host;
    in.determinism = spec_.determinism;
    const SelectionChoice c = impl.selection[static_cast<int>(spec_.collective)].Select(in);
    kind_ = c.kind;
    params_ = c.params;
    // run_to_run: a fixed combine order, computed once and broadcast where the MPI library
    // would decide the order.
    if (run_to_run && kind_ == ScheduleKind::mpi_library) {
      kind_ = spec_.collective == Collective::allreduce ? ScheduleKind::reduce_bcast
                                                        : ScheduleKind::binomial;
      params_.node_aware = false;
    }
    // A node-aware leaf runs flat where the communicator has one node or one rank per node.
#if TRIBUTARY_HAVE_MPI
    if (params_.node_aware &&
        (!impl.nodes || impl.nodes->count <= 1 || impl.nodes->count >= impl.size))
      params_.node_aware = false;
#endif
  }
  // The MPI library's collectives need a communicator whose collective order agrees on
  // every rank; objects beyond the pool (ContextOptions::communicator_pool) take one of
  // Tributary's schedules instead, chosen from what every rank knows alike.
  const bool stand_in = kind_ == ScheduleKind::mpi_library && !impl.HasLane(pool_slot_);
  if (stand_in) {
    if (spec_.device_memory)
      throw UsageError("device memory to the MPI library without a communicator of the pool");
    const SelectionChoice c = LibraryStandIn(spec_.collective, bytes);
    kind_ = c.kind;
    params_ = c.params;
  }
  if (impl.log_selection) {
    static const char* names[] = {"allreduce", "reduce", "allgather"};
    std::fprintf(stderr, "tributary: %s: %s of %zu B (%s, %s operator) -> %s%s%s\n",
                 Where().c_str(), names[static_cast<int>(spec_.collective)], bytes,
                 spec_.builtin_op ? "builtin" : "user",
                 spec_.payload.commutative ? "commutative" : "non-commutative", ToString(kind_),
                 params_.node_aware ? " (node-aware)" : "",
                 spec_.device_memory ? " [device memory to the MPI library]"
                 : stand_in          ? " [for mpi_library: no communicator of the pool left; "
                                       "ContextOptions::communicator_pool]"
                 : forced            ? " [forced by ContextOptions]"
                                     : "");
  }
}

void ReductionCore::StartSchedule() {
#if TRIBUTARY_HAVE_MPI
  auto& impl = ctx_->Impl();
  if (spec_.window) ChooseSchedule();  // by the size of the records, the same on every rank
  ScheduleArgs args;
  args.collective = spec_.collective;
  args.root = spec_.root;
  args.data = spec_.data;
  args.input = spec_.input;
  args.result = spec_.result;
  args.payload = spec_.payload;
  args.params = params_;
  const ScheduleKind kind = kind_;
  if (spec_.window && spec_.window->RecordsOnly() && kind != ScheduleKind::mpi_library) {
    args.finisher = finisher_;
    // Exact records combine by multiword addition, element by element, and carry no
    // header (no user operator can throw): the schedule may split them like values.
    const PackedSegment& records = spec_.packed->segments.front();
    args.data = static_cast<char*>(spec_.data) + records.offset + sizeof(PackedHeader);
    args.payload.count = records.count;
    args.payload.elem_size = records.elem_size;
    args.payload.combine = records.combine;
    args.payload.combine_state = records.state;
  } else if (spec_.packed) {
    args.payload.count = 1;
    args.payload.elem_size = spec_.packed->bytes;
    args.payload.combine = &PackedCombine;
    args.payload.combine_state = spec_.packed;
    // Only the MPI library needs a datatype and an MPI_Op; Tributary's schedules call the
    // combine directly (this keeps a registry lock and an attribute write off their starts).
    if (kind == ScheduleKind::mpi_library) {
      args.payload.elem_type = PackedType(spec_.packed);
      args.payload.op = GenericMpiOp(args.payload.commutative);
    }
  }
  if (spec_.packed) StampAgreement(spec_.data, record_hash_);
  args.comm = kind == ScheduleKind::mpi_library ? impl.LaneFor(pool_slot_) : impl.comm;
  args.tag = impl.TagFor(pool_slot_, Generation());
  args.nodes = impl.nodes.get();
  args.trace = trace_ ? trace_->ScheduleStart(id_, Generation(), kind) : nullptr;
  if (spec_.data_read_only && !spec_.packed && WritesData(kind, args, impl.rank, impl.size)) {
    const std::size_t bytes = args.payload.count * args.payload.elem_size;
    if (staging_.size() < bytes) staging_.resize(bytes);
    if (bytes) std::memcpy(staging_.data(), args.data, bytes);
    args.data = staging_.data();
  }
  // The two-level form takes no separate contribution: it starts from the data.
  if (args.input && args.params.node_aware) {
    const std::size_t bytes = args.payload.count * args.payload.elem_size;
    if (bytes) std::memcpy(args.data, args.input, bytes);
    args.input = nullptr;
  }
  if (!schedule_ || schedule_->Kind() != kind || !schedule_->Rearm(args))
    schedule_ = MakeSchedule(kind, args);
  schedule_active_ = true;
  ChargeStart();  // under SMPI only: the library's own work, which the simulator does not charge
  schedule_->Start();
#endif
}

#if TRIBUTARY_HAVE_MPI
MPI_Datatype ReductionCore::PackedType(const PackedLayout* layout) {
  if (packed_type_ == MPI_DATATYPE_NULL || packed_type_bytes_ != layout->bytes) {
    if (packed_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&packed_type_);
    packed_type_layout_ = nullptr;
    CheckMpi(MPI_Type_contiguous(static_cast<int>(layout->bytes), MPI_BYTE, &packed_type_),
             "MPI_Type_contiguous");
    CheckMpi(MPI_Type_commit(&packed_type_), "MPI_Type_commit");
    packed_type_bytes_ = layout->bytes;
  }
  if (packed_type_layout_ != layout) {  // the attribute names the layout the op combines by
    CheckMpi(
        MPI_Type_set_attr(packed_type_, PackedLayoutKeyval(), const_cast<PackedLayout*>(layout)),
        "MPI_Type_set_attr");
    packed_type_layout_ = layout;
  }
  return packed_type_;
}
#endif

bool ReductionCore::AdvanceLocked() {
  if (State() != Phase::in_flight && !draining_) return true;
  if (trace_) trace_->Advancing(id_);
  bool network_done = true;
#if TRIBUTARY_HAVE_MPI
  auto& impl = ctx_->Impl();
  if (impl.size > 1) {
    impl.CheckThread();
    auto mpi = impl.LockMpi();
    if (agreement_pending_) {
      if (!agreement_->Progress()) return false;
      if (!AgreementDone()) return State() == Phase::failed;
    }
    network_done = !schedule_active_ || schedule_->Progress();
    finished_by_schedule_ = network_done && schedule_active_ && schedule_->Finished();
    if (network_done && schedule_active_ && spec_.packed && PackedDisagreed(spec_.data)) {
      schedule_active_ = false;
      if (draining_) {
        draining_ = false;
        return true;
      }
      Disagree(
          "their operator, element type, count, collective, root, determinism mode or object "
          "differs (DebugLevel::full names which, with each rank's value)");
      return true;
    }
    if (network_done && speculative_) {
      speculative_ = false;
      if (SpeculationMissed()) {
        schedule_active_ = false;
        StartAgreement();
        return false;
      }
    }
  }
#endif
  if (!network_done) return false;
  schedule_active_ = false;
  if (draining_) {
    draining_ = false;  // the failed generation's messages are all done; result discarded
    return true;
  }
  FinishRecords();
  Finish();
  return true;
}

void ReductionCore::Finish() {
  try {
    if (finish_) finish_(client_);
    done_cycle_.store(CycleStamp(), std::memory_order_relaxed);
    if (trace_) trace_->Complete(id_, Generation(), false);
    phase_.store(Phase::done, std::memory_order_release);
  } catch (const RemoteError& e) {
    SetError(ErrorKind::remote, e.what(), e.origin_rank());
    phase_.store(Phase::failed, std::memory_order_release);
  } catch (const std::exception& e) {
    SetError(ErrorKind::usage, e.what(), ctx_ ? ctx_->Rank() : -1);
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
    SetError(ErrorKind::usage, Where() + ": " + e.what(), ctx_ ? ctx_->Rank() : -1);
    schedule_active_ = false;
    phase_.store(Phase::failed, std::memory_order_release);
    return true;
  } catch (const std::exception& e) {
    SetError(ErrorKind::mpi, Where() + ": " + e.what(), ctx_ ? ctx_->Rank() : -1);
    phase_.store(Phase::failed, std::memory_order_release);
    return true;
  }
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
  if (!ctx_) return TaskStatus::incomplete;
  const unsigned polls = idle_polls_.load(std::memory_order_relaxed) + 1;
  idle_polls_.store(polls, std::memory_order_relaxed);
  if ((polls & 255u) == 0 && ctx_->Impl().MayCallMpi() &&
      (CurrentSweep() == 0 || ctx_->Impl().hooked_runs.load(std::memory_order_relaxed) == 0))
    ctx_->Progress();
  else
    AdvanceOthers(*ctx_, this);
  return TaskStatus::incomplete;
}

TaskStatus ReductionCore::AwaitStart(std::uint64_t generation) {
  awaited_.store(generation, std::memory_order_relaxed);
  if (ctx_ && ctx_->Impl().failed.load()) {
    const auto& impl = ctx_->Impl();
    throw RemoteError(impl.failure_origin,
                      Where() + ": polled for generation " + std::to_string(generation) +
                          ", which will not start after the failure: " + impl.failure_text);
  }
  return Incomplete();
}

TaskStatus ReductionCore::Check(std::uint64_t generation) {
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

TaskStatus ReductionCore::CheckCurrent() {
  const Phase p = State();
  if (p == Phase::done) return TaskStatus::complete;
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
  SetError(ErrorKind::usage, error, ctx_ ? ctx_->Rank() : -1);
  phase_.store(Phase::failed, std::memory_order_release);
}

bool ReductionCore::FailGeneration(const std::string& error, bool remote, int origin,
                                   bool defer_launch) noexcept {
  std::lock_guard<ObjectLock> lock(mutex_);
  const Phase p = State();
  if (p != Phase::collecting && p != Phase::in_flight) return false;
  SetError(remote ? ErrorKind::remote : ErrorKind::watchdog, error, origin);
  if (p == Phase::collecting && abandon_) {
    if (defer_launch) {
      // The rank where the failure happened launches only once every other rank has
      // acknowledged the notice (LaunchAbandoned): then no rank can complete this
      // generation with the neutral elements standing in for the missing contributions.
      abandon_pending_ = true;
      phase_.store(Phase::failed, std::memory_order_release);
      return true;
    }
    LaunchAbandonedLocked();
  }
  draining_ = State() == Phase::in_flight;
  phase_.store(Phase::failed, std::memory_order_release);
  return true;
}

void ReductionCore::LaunchAbandonedLocked() noexcept {
  // Launch with what has arrived so that the other ranks' requests complete; the result
  // is discarded. The launch needs the object's own lock released.
  mutex_.unlock();
  try {
    abandon_(client_);
  } catch (...) {
  }
  mutex_.lock();
}

void ReductionCore::LaunchAbandoned() noexcept {
  std::lock_guard<ObjectLock> lock(mutex_);
  if (!abandon_pending_) return;
  abandon_pending_ = false;
  // Launch needs the generation collecting; the error stays and is restored after.
  const ErrorKind kind = error_kind_;
  const std::string text = error_;
  const int origin = error_origin_;
  phase_.store(Phase::collecting, std::memory_order_release);
  LaunchAbandonedLocked();
  draining_ = State() == Phase::in_flight;
  SetError(kind, text, origin);
  phase_.store(Phase::failed, std::memory_order_release);
}

}  // namespace tributary::detail
