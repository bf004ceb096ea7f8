#include "core/message.hpp"

#include <cstring>
#include <limits>
#include <new>
#include <type_traits>

#include "core/mpi_registry.hpp"
#include "core/packed_combine.hpp"
#include "core/reduction_host.hpp"
#include "core/trace.hpp"
#include "platform/tags.hpp"
#include "tributary/detail/core/op_holder.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

#if TRIBUTARY_HAVE_MPI
namespace {

// Writes the agreement record's hash into the header of the packed message at `data`.
void StampAgreement(void* data, std::uint64_t hash) noexcept {
  PackedHeader h;
  std::memcpy(&h, data, sizeof h);
  h.agreement = hash;
  std::memcpy(data, &h, sizeof h);
}

// Whether `kind` carries a message of `bytes` as one piece, so that a header before the
// elements reaches every combine (the speculation's condition). The MPI library does, but
// a large message as one element of an opaque type would keep it from splitting it.
bool MovesWhole(ScheduleKind kind, std::size_t bytes) noexcept {
  switch (kind) {
    case ScheduleKind::recursive_doubling:
    case ScheduleKind::recursive_multiplying:
    case ScheduleKind::knomial:
    case ScheduleKind::binomial:
    case ScheduleKind::reduce_bcast:
      return true;
    case ScheduleKind::mpi_library:
      // SimGrid SMPI's MPI_Iallreduce returns wrong sums for the packed message with
      // Tributary's MPI_Op (bench_simulation check, 4-64 simulated ranks): there the length
      // round runs beside the library's schedule on the plain elements instead.
      return !TRIBUTARY_HAVE_SMPI && bytes <= 65536;
    default:
      return false;
  }
}

// Whether `kind` tells a length speculation's miss by its messages' sizes (ScheduleArgs::
// missed) instead of a header, so that the elements travel in place.
bool TellsBySize(ScheduleKind kind, const ScheduleParams& params) noexcept {
  return kind == ScheduleKind::recursive_doubling && !params.node_aware;
}

// The two values of the element that carries a speculation's miss on the MPI library
// (Message::FlagsMiss), for elements of type T: `fits` leaves the operator's combine of the
// others as it is, `misses` changes it, whatever the number of ranks. False for an operator
// without such a pair (xor: two misses cancel; minloc; replace).
template <class T>
bool FlagPair(MPI_Op op, unsigned char* fits, unsigned char* misses) noexcept {
  using Limits = std::numeric_limits<T>;
  T f{};
  T m{};
  if (op == MPI_SUM) {
    m = 1;
  } else if (op == MPI_PROD) {
    f = 1;
  } else if (op == MPI_MIN) {
    f = Limits::max();
    m = Limits::lowest();
  } else if (op == MPI_MAX) {
    f = Limits::lowest();
    m = Limits::max();
  } else if constexpr (std::is_integral_v<T>) {
    if (op == MPI_LAND) {
      f = 1;
    } else if (op == MPI_BAND) {
      f = static_cast<T>(~T{0});
    } else if (op == MPI_LOR || op == MPI_BOR) {
      m = 1;
    } else {
      return false;
    }
  } else {
    return false;
  }
  std::memcpy(fits, &f, sizeof f);
  std::memcpy(misses, &m, sizeof m);
  return true;
}

// FlagPair for a predefined element type: those of 4 and 8 bytes (a sum of ones over the
// ranks cannot wrap in them). False for the others (complex, long double, the 8- and
// 16-bit integers): the header carries the miss there.
bool MissFlags(MPI_Op op, MPI_Datatype type, unsigned char* fits, unsigned char* misses) noexcept {
  if (type == MPI_DOUBLE) return FlagPair<double>(op, fits, misses);
  if (type == MPI_FLOAT) return FlagPair<float>(op, fits, misses);
  if (type == MPI_INT) return FlagPair<int>(op, fits, misses);
  if (type == MPI_UNSIGNED) return FlagPair<unsigned>(op, fits, misses);
  if (type == MPI_LONG) return FlagPair<long>(op, fits, misses);
  if (type == MPI_UNSIGNED_LONG) return FlagPair<unsigned long>(op, fits, misses);
  if (type == MPI_LONG_LONG) return FlagPair<long long>(op, fits, misses);
  if (type == MPI_UNSIGNED_LONG_LONG) return FlagPair<unsigned long long>(op, fits, misses);
  if (type == MPI_INT32_T) return FlagPair<std::int32_t>(op, fits, misses);
  if (type == MPI_UINT32_T) return FlagPair<std::uint32_t>(op, fits, misses);
  if (type == MPI_INT64_T) return FlagPair<std::int64_t>(op, fits, misses);
  if (type == MPI_UINT64_T) return FlagPair<std::uint64_t>(op, fits, misses);
  return false;
}

// A stand-in's combine: its running value is never taken (Message::FillSpeculating).
void CombinesNothing(const void* /*state*/, const void* /*in*/, void* /*inout*/,
                     std::size_t /*count*/) {}

// True when a completed packed message says that the ranks' records differ.
bool PackedDisagreed(const void* data) noexcept {
  PackedHeader h;
  std::memcpy(&h, data, sizeof h);
  return h.agreement == PackedHeader::kDisagreed;
}

}  // namespace
#endif

namespace {

// What the selection reads: the same request gives the same choice, on every rank.
bool SameRequest(const ScheduleRequest& a, const ScheduleRequest& b) noexcept {
  return a.collective == b.collective && a.bytes == b.bytes && a.builtin_op == b.builtin_op &&
         a.commutative == b.commutative && a.determinism == b.determinism &&
         a.device_memory == b.device_memory;
}

}  // namespace

std::string GenerationWhere(const std::string& object, std::uint64_t generation, int rank) {
  return object + ", generation " + std::to_string(generation) + ", rank " + std::to_string(rank);
}

Message::Message(std::string object, std::uint64_t object_code)
    : object_(std::move(object)), object_code_(object_code) {
#if TRIBUTARY_HAVE_MPI
  agreement_ = std::make_unique<Agreement>();
#endif
}

Message::~Message() = default;

void Message::Load(const LaunchSpec& spec) {
  spec_ = spec;
  finisher_ = spec_.window ? spec_.window->Rounding() : Finisher{};
  finished_by_schedule_ = false;
  error_.clear();
  rechoose_ = false;
  speculating_ = Speculates();
  if (speculating_) {
    // What the selection reads, the length and the form: where any differs, this rank's
    // message cannot travel on the agreed schedule and length.
    stand_in_ = spec_.packed || spec_.window || spec_.length != agreed_length_ ||
                !SameRequest(OwnRequest(), agreed_request_);
  } else {
    stand_in_ = false;
  }
  beside_ = speculating_ && !agreed_whole_;
}

void Message::Launch(const LaunchSpec& spec, const Env& env) {
  env_ = env;
  Load(spec);
  if (!ChoosesLate()) Choose();  // exact records: once their size is known
  if (env_.trace) env_.trace->NetworkStart(env_.object, env_.generation, spec_);
  if (env_.size == 1) {
    RunAlone();  // nothing to send: the core's Check finishes at once
    return;
  }
#if TRIBUTARY_HAVE_MPI
  comm_ = env_.host->Comm();
  tag_ = GenerationTag(env_.slot, env_.generation);
  debug_ = env_.host->Options().debug;
  if (Start(!ChoosesLate()) == Next::schedule) StartSchedule();
#endif
}

// The schedule of this generation, from inputs that are identical on every rank (the
// pre-round compares the choice). The selection and the options are fixed for the
// Context's life: a request like the last one takes the last one's choice.
void Message::Choose() {
  const ScheduleRequest request = Request();
  if (!chose_ || !SameRequest(request, chosen_for_)) {
    chose_ = false;  // stays so where the options refuse the choice
    decision_ = env_.host->Choose(request, env_.slot);
    decision_code_ = ScheduleCode(decision_.choice.kind, decision_.choice.params);
    chosen_for_ = request;
    chose_ = true;
  }
  run_kind_ = decision_.choice.kind;
  run_params_ = decision_.choice.params;
  if (env_.host->LogsChoices()) env_.host->LogChoice(Where(), request, decision_);
}

std::string Message::Where() const { return GenerationWhere(object_, env_.generation, env_.rank); }

ScheduleRequest Message::Request() const noexcept {
  return speculating_ ? agreed_request_ : OwnRequest();
}

void Message::RunAlone() {
  if (spec_.window) UsePacked(spec_.window->Pack(spec_.window->Measure(), false));
  const std::size_t bytes = spec_.payload.count * spec_.payload.elem_size;
  if (spec_.input && bytes) std::memcpy(spec_.data, spec_.input, bytes);  // the result is the input
}

const unsigned char* Message::Records() const {
  return static_cast<const unsigned char*>(spec_.data) + sizeof(PackedHeader) +
         spec_.packed->segments.front().offset;
}

// Exact records the schedule left unrounded: rounded here where the result is wanted.
void Message::Finish(int rank) {
  if (!spec_.window || !finisher_ || finished_by_schedule_) return;
  if (spec_.collective == Collective::reduce && rank != spec_.root) return;
  finisher_.fn(finisher_.state, Records(), finisher_.out, 0, spec_.packed->segments.front().count);
}

#if TRIBUTARY_HAVE_MPI
Message::Next Message::Start(bool chosen) {
  chosen_ = chosen;
  kind_ = run_kind_;
  params_ = run_params_;
  speculative_ = false;
  record_hash_ = 0;
  schedule_code_ = 0;
  const bool full = debug_ == DebugLevel::full;
  // The record is compared wherever a round carries it: the pre-round, or the header of a
  // packed message or of a speculation. Plain elements of a fixed size at DebugLevel::basic
  // have neither: their record is not hashed (two hashes cost a scalar's cycle about 200
  // instructions).
  if (debug_ != DebugLevel::none && (full || spec_.check_length || spec_.packed || spec_.window)) {
    AgreementRecord record = spec_.agreement;
    if (record.fingerprint) record.op = record.fingerprint(record.client);
    record_op_ = record.op;
    if (spec_.check_length) record.count = 0;  // compared as the length
    if (!hashed_ || !SameRecord(record, hashed_record_)) {
      hashed_ = RecordHash(record, object_code_);
      hashed_record_ = record;
    }
    record_hash_ = hashed_;
    if (chosen) schedule_code_ = decision_code_;  // the code of run_kind_ and run_params_
  }
  short_signal_ = flag_signal_ = false;
  if (speculating_) {  // the pre-round ran for an earlier generation
    if (beside_) {
      StartBeside();
    } else if (SignalsShort()) {
      // No header carries the record: a rank whose record is not the one agreed on does not
      // fit either (where every rank's changed alike, the pre-round then agrees on it).
      short_signal_ = true;
      stand_in_ = stand_in_ || record_hash_ != agreed_hash_;
    } else if (FlagsMiss()) {
      flag_signal_ = true;  // the same: no header carries the record
      stand_in_ = stand_in_ || record_hash_ != agreed_hash_;
    }
    return Next::schedule;
  }
  const WindowNeeds* guess = spec_.window ? spec_.window->Guess() : nullptr;
  if (guess && !spec_.check_length && !full && spec_.collective == Collective::allreduce) {
    // An exact allreduce with a window agreed before. Large messages are written in it
    // while measured, and the agreement follows (the records stand where it agrees on the
    // same window). Others skip the agreement: the records end with a count of the ranks
    // whose data does not fit that window; where it is not zero, every rank agrees on a
    // window and runs the records again (Completed).
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
      StartPreRound(&measured);
      return Next::wait;
    }
    speculative_ = true;
    return Next::schedule;
  }
  if (spec_.check_length || full || spec_.window) {
    StartPreRound();
    return Next::wait;
  }
  return Next::schedule;
}

bool Message::CheckPredefined() {
  // Whether an operator and a datatype are predefined is a property of their handles'
  // values (a user's MpiType specialisation may return a datatype of its own).
  kept_op_checked_ = spec_.payload.op;
  kept_type_checked_ = spec_.payload.elem_type;
  int integers = 0, addresses = 0, types = 0, combiner = MPI_COMBINER_NAMED;
  if (spec_.payload.elem_type != MPI_DATATYPE_NULL)
    CheckMpi(
        MPI_Type_get_envelope(spec_.payload.elem_type, &integers, &addresses, &types, &combiner),
        "MPI_Type_get_envelope");
  kept_op_ = PredefinedOpName(spec_.payload.op) != nullptr && combiner == MPI_COMBINER_NAMED;
  return kept_op_;
}

// Recursive doubling keeps the data apart by combining the first time as mine ∘ partner's
// on both partners (RecursiveDoublingSchedule::CombineIncoming): only for a predefined
// operator on predefined elements, which gives identical bits either way round. By the
// agreed operator: one rank's own may be another now (it then does not fit).
bool Message::SignalsShort() const noexcept {
  return agreed_length_ > 0 && TellsBySize(kind_, params_) && agreed_predefined_;
}

bool Message::FlagsMiss() const noexcept {
  return agreed_flag_ && kind_ == ScheduleKind::mpi_library;
}

ScheduleArgs Message::Base() const {
  ScheduleArgs base;
  base.comm = comm_;
  base.tag = tag_;
  return base;
}

void Message::StartSchedule() {
  if (ChoosesLate()) Choose();  // by the size of the records, the same on every rank
  ScheduleArgs args;
  args.params = run_params_;
  const bool read_only = FillArgs(run_kind_, &args);
  env_.host->Place(run_kind_, env_.slot, env_.generation, &args);
  args.rounds =
      env_.trace ? env_.trace->ScheduleStart(env_.object, env_.generation, run_kind_) : nullptr;
  env_.run->Start(run_kind_, args, read_only, env_.rank, env_.size);
}

// The schedule this rank's own request chooses, for the pre-round to compare (a
// speculation whose value does not fit the agreed one). A choice the options refuse gets a
// code of its own: the pre-round then tells the ranks that refused it from those that did
// not, and where every rank did, StartSchedule refuses it on every rank.
void Message::ChooseOwn() {
  chosen_ = false;
  schedule_code_ = 0;
  if (!env_.host) return;
  try {
    const ScheduleDecision d = env_.host->Choose(OwnRequest(), env_.slot);
    kind_ = d.choice.kind;
    params_ = d.choice.params;
    chosen_ = true;
    schedule_code_ = ScheduleCode(kind_, params_);
  } catch (const UsageError&) {
    schedule_code_ = 1;
  }
}

// A speculation on a schedule that splits the message: the pre-round runs beside it on
// what this rank holds (the core advances it with the schedule, ProgressBeside), and
// decides once both are done (Completed, then Poll).
void Message::StartBeside() {
  if (stand_in_) ChooseOwn();
  StartPreRound();
  pending_ = false;  // the schedule runs meanwhile
  beside_running_ = true;
}

void Message::ProgressBeside() {
  if (beside_running_ && agreement_->Progress()) beside_running_ = false;
}

// The pre-round (src/core/agreement.cpp): lengths, the agreement record, the schedule and the
// exact-sum window, in one small allreduce on the Context's communicator.
void Message::StartPreRound(const WindowNeeds* measured) {
  Agreement::Input in;
  in.record = record_hash_;
  in.schedule = schedule_code_;
  in.length = static_cast<std::int64_t>(spec_.length);
  in.check_length = spec_.check_length;
  in.window = measured ? *measured : spec_.window ? spec_.window->Measure() : WindowNeeds{};
  if (env_.host) {  // the tree's schedule for a small allreduce
    const SelectionChoice c = env_.host->AgreementSchedule();
    in.kind = c.kind;
    in.params = c.params;
  }
  agreement_->StartPreRound(in, Base());
  pending_ = true;
}

std::string Message::Disagreement(const std::string& what) const {
  return "the ranks started this generation differently, so none takes a result: " + what +
         (debug_ == DebugLevel::full
              ? " (checked at DebugLevel::full)"
              : " (found at DebugLevel::basic; DebugLevel::full checks every generation)");
}

Message::Next Message::Poll(bool draining) {
  if (!agreement_->Progress()) return Next::wait;
  pending_ = false;
  if (describing_) {
    describing_ = false;
    if (draining) return Next::finished;  // failed already: its own error stands
    error_ = Disagreement(agreement_->Differences());
    return Next::failed;
  }
  switch (agreement_->Evaluate()) {
    case Agreement::Verdict::differ: {
      length_known_ = false;
      after_beside_ = stand_in_ = false;
      if (draining) return Next::finished;  // failed already: no description round
      // Every rank sees the same hashes: all describe themselves, none starts the reduction.
      const std::string schedule =
          !chosen_ ? std::string("not chosen yet")
                   : std::string(ToString(kind_)) +
                         (TakesRadix(kind_) ? " (radix " + std::to_string(params_.radix) + ")"
                                            : std::string()) +
                         (params_.node_aware ? " (node-aware)" : "");
      agreement_->StartDescriptions(
          ViewOf(spec_.agreement, record_op_, object_, object_code_, spec_.length,
                 spec_.check_length, schedule, schedule_code_),
          Base());
      pending_ = describing_ = true;
      return Next::wait;
    }
    case Agreement::Verdict::lengths_differ:
      length_known_ = false;
      after_beside_ = stand_in_ = false;
      if (draining) return Next::finished;
      // Every rank sees the same max and min: all fail together, none starts the reduction.
      error_ = "value lengths differ across ranks: this rank has " + std::to_string(spec_.length) +
               " element(s); the ranks have between " + std::to_string(agreement_->MinLength()) +
               " and " + std::to_string(agreement_->MaxLength());
      return Next::failed;
    case Agreement::Verdict::agreed:
      // Lengths and a schedule compared: the next generations may speculate on them, with
      // a header where the schedule moves the message whole (it rides on one piece only),
      // else with the pre-round beside the schedule.
      if (spec_.length_in_header && !spec_.packed && !spec_.window && chosen_ &&
          schedule_code_ > 1) {
        length_known_ = true;
        agreed_length_ = spec_.length;
        agreed_request_ = OwnRequest();
        agreed_whole_ = MovesWhole(kind_, agreed_request_.bytes);
        agreed_hash_ = record_hash_;
        agreed_predefined_ = Predefined();
        agreed_op_ = spec_.payload.op;
        agreed_type_ = spec_.payload.elem_type;
        agreed_elem_ = spec_.payload.elem_size;
        agreed_flag_ = agreed_whole_ && kind_ == ScheduleKind::mpi_library && agreed_predefined_ &&
                       agreed_elem_ <= sizeof flag_fits_ &&
                       MissFlags(agreed_op_, agreed_type_, flag_fits_, flag_misses_);
      }
      if (after_beside_) {  // the schedule beside it has completed
        after_beside_ = false;
        if (!stand_in_) return Next::finished;
        // Every rank sent a stand-in (the lengths, the operator or the mode changed alike):
        // the schedule chosen for what they hold now runs on their values (exact records
        // packed in the agreed window first, below).
        stand_in_ = false;
        rechoose_ = true;
      }
      break;
  }
  if (spec_.window) {
    try {
      UsePacked(spec_.window->Pack(agreement_->AgreedWindow(env_.size), false));
    } catch (const std::exception& e) {  // out of memory: fail here; the others wait (watchdog)
      error_ = e.what();
      return Next::failed;
    }
  }
  return Next::schedule;
}

bool Message::FillArgs(ScheduleKind kind, ScheduleArgs* args) {
  args->collective = spec_.collective;
  args->root = spec_.root;
  args->data = spec_.data;
  args->input = spec_.input;
  args->result = spec_.result;
  args->payload = spec_.payload;
  if (kind == ScheduleKind::mpi_library) {
    // A persistent request copies the data into host memory: not for device memory.
    args->op_kept = Predefined() && !spec_.device_memory;
    // Only the elements themselves (below): the other forms travel in the message's buffers.
    args->fixed_storage = false;
  }
  if (speculating_) return FillSpeculating(kind, args);
  if (spec_.window && spec_.window->RecordsOnly() && kind != ScheduleKind::mpi_library) {
    args->finisher = finisher_;
    // Exact records combine by multiword addition, element by element, and carry no
    // header (no user operator can throw): the schedule may split them like values.
    const PackedSegment& records = spec_.packed->segments.front();
    args->data = static_cast<char*>(spec_.data) + records.offset + sizeof(PackedHeader);
    args->payload.count = records.count;
    args->payload.elem_size = records.elem_size;
    args->payload.combine = records.combine;
    args->payload.combine_state = records.state;
  } else if (spec_.packed) {
    args->payload.count = 1;
    args->payload.elem_size = spec_.packed->bytes;
    args->payload.combine = &PackedCombine;
    args->payload.combine_state = spec_.packed;
    // Only the MPI library needs a datatype and an MPI_Op; Tributary's schedules call the
    // combine directly (this keeps a registry lock and an attribute write off their starts).
    if (kind == ScheduleKind::mpi_library) {
      args->payload.elem_type = PackedType(spec_.packed);
      args->payload.op = GenericOp(args->payload.commutative);
      args->op_kept = true;
    }
  } else if (kind == ScheduleKind::mpi_library) {
    args->fixed_storage = spec_.fixed_storage && !spec_.device_memory;
  }
  if (spec_.packed) StampAgreement(spec_.data, record_hash_);
  return spec_.data_read_only && !spec_.packed;
}

// A generation on the agreed length and schedule (the top of message.hpp). A rank that does
// not fit sends the agreed form whatever it holds (plain elements of another length, a
// packed message of an operator of its own, exact records): the agreed element size,
// datatype and operator, and a combine that leaves its own buffer as it is (its result is
// never taken).
bool Message::FillSpeculating(ScheduleKind kind, ScheduleArgs* args) {
  if (stand_in_) {
    args->input = nullptr;
    args->payload.count = agreed_length_;
    args->payload.elem_size = agreed_elem_;
    args->payload.elem_type = agreed_type_;
    args->payload.op = agreed_op_;
    args->payload.combine = &CombinesNothing;
    args->payload.combine_state = nullptr;
    if (kind == ScheduleKind::mpi_library) args->op_kept = agreed_predefined_;
  }
  args->payload.commutative = agreed_request_.commutative;
  if (!beside_ && short_signal_) {
    // The elements in place, the length told by the messages' sizes (ScheduleArgs::missed).
    short_missed_ = stand_in_;
    args->missed = &short_missed_;
    args->payload.count = agreed_length_;
    if (!stand_in_) return spec_.data_read_only;
    wire_.assign(agreed_length_ * agreed_elem_, 0);  // posted for, never written
    args->data = wire_.data();
    return false;
  }
  if (!beside_ && flag_signal_) {
    FillFlagged(args);
    return false;
  }
  if (!beside_) {
    FillSpeculation(kind, args);
    return false;
  }
  if (stand_in_) {
    // Beside a splitting schedule: the agreed length of zeros instead of this rank's value.
    wire_.assign(agreed_length_ * agreed_elem_, 0);
    args->data = wire_.data();
    return false;
  }
  // Beside it, this rank's own elements (plain, of the agreed length and request).
  if (kind == ScheduleKind::mpi_library)
    args->fixed_storage = spec_.fixed_storage && !spec_.device_memory;
  return spec_.data_read_only;
}

// A speculative exact allreduce has completed: the count of ranks whose data did not fit
// the window (the last record's low digit, summed like the others) decides whether the
// records stand or every rank agrees on a window and runs them again.
bool Message::SpeculationMissed() const {
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

// The speculation's message: the header with the record's hash, then the elements (from
// the contribution; the result is copied back on completion). A rank whose value does not
// fit the agreed length and schedule sends the agreed length of zeros behind a header that
// says the ranks disagree, which every rank's combine then carries (PackedCombine), with no
// segment to combine.
void Message::FillSpeculation(ScheduleKind kind, ScheduleArgs* args) {
  const std::size_t elem = agreed_elem_;
  const std::size_t body = agreed_length_ * elem;
  wire_.resize(sizeof(PackedHeader) + body);
  PackedHeader h;
  h.agreement = stand_in_ ? PackedHeader::kDisagreed : record_hash_;
  std::memcpy(wire_.data(), &h, sizeof h);
  wire_layout_.bytes = wire_.size();
  wire_layout_.rank = env_.rank;
  wire_layout_.error_text = nullptr;
  WriteValue(wire_.data() + sizeof h, body);
  if (stand_in_) {
    wire_layout_.segments.clear();
  } else {
    if (wire_layout_.segments.size() != 1) wire_layout_.segments.resize(1);
    wire_layout_.segments[0] =
        PackedSegment{0, agreed_length_, elem, spec_.payload.combine, spec_.payload.combine_state};
  }
  args->data = wire_.data();
  args->input = nullptr;
  args->payload.count = 1;
  args->payload.elem_size = wire_.size();
  args->payload.combine = &PackedCombine;
  args->payload.combine_state = &wire_layout_;
  if (kind == ScheduleKind::mpi_library) {
    args->payload.elem_type = PackedType(&wire_layout_);
    args->payload.op = GenericOp(args->payload.commutative);
    args->op_kept = true;
  }
}

// The speculation's elements at `to` (`body` bytes): this rank's value, or zeros from a
// stand-in.
void Message::WriteValue(unsigned char* to, std::size_t body) const noexcept {
  if (!body) return;
  if (stand_in_)
    std::memset(to, 0, body);
  else
    std::memcpy(to, spec_.input ? spec_.input : spec_.data, body);
}

// The speculation's message on the MPI library with the miss in an element of its own: the
// agreed length of elements (this rank's in place, or zeros from a rank that does not fit),
// then that element, all combined by the agreed predefined operator (a rank that does not
// fit sends it too, whatever operator it holds now). The schedule copies both into the
// buffer it sends from (ScheduleArgs::flag).
void Message::FillFlagged(ScheduleArgs* args) {
  const std::size_t elem = agreed_elem_;
  std::memcpy(flag_, stand_in_ ? flag_misses_ : flag_fits_, sizeof flag_);
  if (stand_in_ || spec_.input) {  // else the elements travel in place
    const std::size_t body = agreed_length_ * elem;
    wire_.resize(body);
    WriteValue(wire_.data(), body);
    args->data = wire_.data();
  }
  args->flag = flag_;
  args->input = nullptr;
  args->payload.count = agreed_length_;
  args->payload.elem_size = elem;
  args->payload.elem_type = agreed_type_;
  args->payload.op = agreed_op_;
  args->op_kept = true;         // predefined: a persistent request may be bound to them
  args->fixed_storage = false;  // the schedule sends from a copy of its own
}

// The combined element differs from the value of a rank that fits: some rank did not. (The
// schedule writes the element's bytes; those after it were copied from flag_fits_.)
bool Message::FlagMissed() const noexcept {
  return std::memcmp(flag_, flag_fits_, sizeof flag_) != 0;
}

// A speculation has completed: it stands where no rank sent a stand-in and the records
// agree (the result goes to the elements). Otherwise the schedule for what this rank really
// holds is chosen and the pre-round compares both on every rank (which all take part in,
// failed or not, so that none waits for another); the elements are untouched.
Message::Next Message::SpeculationCompleted() {
  speculating_ = false;
  const bool missed = stand_in_ || (short_signal_  ? short_missed_
                                    : flag_signal_ ? FlagMissed()
                                                   : PackedDisagreed(wire_.data()));
  stand_in_ = false;
  if (!missed) {
    const std::size_t body = agreed_length_ * spec_.payload.elem_size;
    if (body && flag_signal_) {
      // Not a stand-in (it missed): in wire_ only where a contribution came apart.
      if (spec_.input) std::memcpy(spec_.data, wire_.data(), body);
    } else if (body && !short_signal_) {
      std::memcpy(spec_.data, wire_.data() + sizeof(PackedHeader), body);
    }
    return Next::finished;
  }
  length_known_ = false;
  rechoose_ = true;
  ChooseOwn();
  StartPreRound();
  return Next::wait;
}

Message::Next Message::Completed(bool rounded, bool draining) {
  finished_by_schedule_ = rounded;
  if (speculating_ && beside_) {
    // The schedule is done; the pre-round beside it decides: at once where it is done and
    // this rank sent its value, else in Poll (which also runs the schedule again where every
    // rank sent a stand-in, through the core's StartSchedule).
    speculating_ = false;
    beside_running_ = false;
    after_beside_ = true;
    pending_ = true;
    if (!stand_in_ && !agreement_->Active()) return Poll(draining);
    return Next::wait;
  }
  if (speculating_) return SpeculationCompleted();
  if (spec_.packed && PackedDisagreed(spec_.data)) {
    length_known_ = false;
    if (draining) return Next::finished;
    error_ = Disagreement(
        "their operator, element type, count, collective, root, determinism mode or object "
        "differs (DebugLevel::full names which, with each rank's value)");
    return Next::failed;
  }
  if (speculative_) {
    speculative_ = false;
    if (SpeculationMissed()) {
      StartPreRound();
      return Next::wait;
    }
  }
  return Next::finished;
}

bool Message::Cancel() noexcept { return !(pending_ || beside_running_) || agreement_->Cancel(); }

bool Message::Quiet() noexcept {
  if ((pending_ || beside_running_) && !agreement_->Quiet()) return false;
  pending_ = beside_running_ = false;
  return true;
}

void Message::Release() noexcept {
  if (pending_ || beside_running_) agreement_->Release();
  pending_ = beside_running_ = false;
}

MPI_Datatype Message::PackedType(const PackedLayout* layout) {
  if (packed_type_ == MPI_DATATYPE_NULL || packed_type_bytes_ != layout->bytes) {
    // A persistent request made on the old type goes first (on every rank: the size is).
    if (env_.run) env_.run->DropKept(true);
    if (packed_type_ != MPI_DATATYPE_NULL) FreePackedType(&packed_type_);
    packed_type_layout_ = nullptr;
    CheckMpi(MPI_Type_contiguous(static_cast<int>(layout->bytes), MPI_BYTE, &packed_type_),
             "MPI_Type_contiguous");
    CheckMpi(MPI_Type_commit(&packed_type_), "MPI_Type_commit");
    packed_type_bytes_ = layout->bytes;
  }
  if (packed_type_layout_ != layout) {  // the attribute names the layout the op combines by
    SetPackedLayout(packed_type_, layout);
    packed_type_layout_ = layout;
  }
  return packed_type_;
}

MPI_Op Message::GenericOp(bool commutative) {
  MPI_Op& op = generic_ops_[commutative ? 1 : 0];
  if (op == MPI_OP_NULL) op = GenericMpiOp(commutative);  // process-wide, freed at finalize
  return op;
}

void Message::LeavePackedType() noexcept {
  if (packed_type_ == MPI_DATATYPE_NULL) return;
  // The request left pending may still combine into its own buffer while MPI runs: its
  // combine finds no layout (and combines nothing) once the type's attribute is cleared.
  // The type is not freed: a persistent request of Open MPI 4.1 does not hold on to its
  // datatype, and combined with a freed one it wrote past its buffers. MPI frees it at
  // MPI_Finalize; the next generation makes a new one.
  if (packed_type_layout_) {
    try {
      SetPackedLayout(packed_type_, nullptr);
    } catch (...) {  // the key exists already (the attribute was set): not reached
    }
  }
  packed_type_ = MPI_DATATYPE_NULL;
  packed_type_bytes_ = 0;
  packed_type_layout_ = nullptr;
}

std::unique_ptr<KeptBuffer> Message::LeaveBuffer(const void* at) noexcept {
  return LeaveBytes(wire_, at);
}

bool Message::FreeMpiObjects() noexcept {
  if (packed_type_ == MPI_DATATYPE_NULL) return true;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return false;
  FreePackedType(&packed_type_);
  return true;
}
#endif

}  // namespace tributary::detail
