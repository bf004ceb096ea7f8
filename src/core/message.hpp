// The message unit: one reduction object's generations on the wire. From the typed layer's
// LaunchSpec to the bytes a schedule moves: the encodings (plain, packed behind a header,
// exact-sum window records), the agreement rounds before the data moves (lengths, the
// agreement record, the window; the description round after a disagreement), the
// speculation on an earlier window and its retry, the combine of packed messages and their
// MPI datatype. ReductionCore launches it (Launch: the choice of the schedule, the first
// round or the schedule's start, with no return to the core before the first message),
// advances it through Poll / Completed / StartSchedule and never reads its bytes.
//
// The length speculation (DebugLevel::basic, an allreduce of a variable-size value with a
// builtin operator): once the ranks have agreed on a generation's length and schedule in
// the pre-round, and that schedule moves the message whole (it does not split it into
// pieces), the next generations skip the pre-round. Each rank copies its elements behind a
// PackedHeader that carries the agreement record's hash, and every rank sends a message of
// the agreed length on the schedule chosen for the agreed request; a rank whose value has
// another length (or whose request would choose otherwise) sends a stand-in whose header
// says "disagreed" instead. The header's combine carries that, and any difference of the
// record, to every rank; then all of them run the pre-round on what they really hold and
// either fail (naming the difference) or run the schedule again, on the elements in place.
// Messages of equal length on one schedule on every rank: no truncation, no hang.
// Recursive doubling with a predefined operator on predefined elements needs no header
// (SignalsShort): the elements travel in place, a rank that does not fit (its length,
// request or record differs from the agreed ones) sends empty messages, and a rank that
// receives fewer bytes than it posted does so from then on (ScheduleArgs::missed), so that
// every rank learns it; the schedule writes the result into the elements only once it
// stands. The MPI library's schedule with such an operator and element (FlagsMiss) carries
// one element more (ScheduleArgs::flag, which the schedule puts after the elements in the
// buffer it copies them into anyway), combined by the same operator: each rank that fits
// sends the value that leaves the others unchanged (0 for a sum, the largest value for a
// minimum), a rank that does not fit one that changes them (1, the lowest value), so that
// the combined element differs from the neutral one where any rank missed; the library's
// own combine, no operator of Tributary's. Both decide by what the ranks agreed on, never by
// what one rank holds now, so that every rank sends the same form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/agreement.hpp"
#include "core/packed_combine.hpp"
#include "core/schedule_run.hpp"
#include "schedules/schedule.hpp"
#include "tributary/context_options.hpp"
#include "tributary/detail/core/message_spec.hpp"

namespace tributary::detail {

class ReductionHost;
class Tracer;

/// "AllReduce<double> 'dt' (object 3), generation 7, rank 1": where an error happened.
std::string GenerationWhere(const std::string& object, std::uint64_t generation, int rank);

class Message {
 public:
  /// The message of the object named `object` (in the description round), whose kind and
  /// label hash to `object_code`.
  Message(std::string object, std::uint64_t object_code);
  ~Message();
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;

  /// Where a generation runs: the object's Context (as its host), its slot and generation,
  /// the rank, and where the schedule runs and reports. The core gives it at each launch.
  struct Env {
    const ReductionHost* host = nullptr;
    int slot = -1;
    std::uint64_t generation = 0;
    int rank = 0;
    int size = 1;
#if TRIBUTARY_HAVE_MPI
    ScheduleRun* run = nullptr;  ///< The object's schedule.
#endif
    Tracer* trace = nullptr;  ///< The Context's timeline, or null.
    int object = -1;          ///< The object's lane on it.
  };

  /// The launch of a new generation, up to its first message: takes the typed layer's
  /// description (its buffers stay the typed layer's and must live until the generation
  /// completes), chooses the schedule where its inputs are known, and starts the agreement
  /// round or the schedule (with the MPI lock held, more than one rank). One rank: nothing
  /// to send, the result is the input. Throws UsageError for a choice the options refuse,
  /// MpiError for a failed MPI call; the caller fails the generation.
  void Launch(const LaunchSpec& spec, const Env& env);
  /// The schedule of the current (or last) generation.
  ScheduleKind ScheduleUsed() const noexcept { return run_kind_; }

#if TRIBUTARY_HAVE_MPI
  /// What the core does next.
  enum class Next : std::uint8_t {
    wait,      ///< A round of the agreement runs: Poll.
    schedule,  ///< Start the schedule (StartSchedule); then Completed once it is done.
    finished,  ///< The network phase is over (on a failed generation: nothing more to do).
    failed     ///< The ranks disagree (Error); none takes a result.
  };
  /// Starts the schedule on the generation's bytes in the object's ScheduleRun (after Poll
  /// said Next::schedule; Launch starts it itself where no round comes first).
  void StartSchedule();
  /// Advances the round of the agreement; `draining`: the generation failed already (no
  /// description round, no error of its own). Never blocks.
  Next Poll(bool draining);
  /// True while a round of the agreement runs (Poll).
  bool Waiting() const noexcept { return pending_; }
  /// Advances a pre-round that runs beside the schedule (a length speculation on a schedule
  /// that splits the message); nothing otherwise. Called with the schedule's progress.
  /// Never blocks.
  void ProgressBeside();
  /// The schedule has completed; `rounded`: it finished the exact records itself.
  /// finished, failed (the header says the ranks disagree), or wait (the speculation
  /// missed: the ranks agree on a window, then the schedule runs again).
  Next Completed(bool rounded, bool draining);
  /// A failed generation's round of the agreement: cancels its receives; Quiet says when
  /// nothing is pending any more; Release lets go of it without freeing its requests.
  bool Cancel() noexcept;
  bool Quiet() noexcept;
  void Release() noexcept;
  /// Lets go of the packed datatype without freeing it, and clears the layout its attribute
  /// names, for a schedule left pending on it (ScheduleRun::Abandon).
  void LeavePackedType() noexcept;
  /// Frees the packed datatype; false where it cannot, MPI having finalised.
  bool FreeMpiObjects() noexcept;
  /// The message's own buffer where it starts at `at` (a speculation's or stand-in's
  /// elements), given up to a schedule left pending on it (null if not).
  std::unique_ptr<KeptBuffer> LeaveBuffer(const void* at) noexcept;
  /// The generation's data is in device memory.
  bool DeviceMemory() const noexcept { return spec_.device_memory; }
#endif
  /// The result in place: exact records the schedule left unrounded are rounded into it.
  void Finish(int rank);
  /// Why the generation failed (Next::failed), without the object's name.
  const std::string& Error() const noexcept { return error_; }

 private:
  void Load(const LaunchSpec& spec);
  ScheduleRequest Request() const noexcept;
  // True where the schedule is chosen when it starts (StartSchedule), not at the launch:
  // exact records (their size is known once the window is agreed), and a length
  // speculation that missed (the length changed).
  bool ChoosesLate() const noexcept { return spec_.window != nullptr || rechoose_; }
  void Choose();
  std::string Where() const;
  void RunAlone();
#if TRIBUTARY_HAVE_MPI
  // Starts the network phase of the loaded generation; `chosen`: the schedule is known now
  // (it is part of the record the ranks compare).
  Next Start(bool chosen);
  // The schedule's bytes for `kind`: data, input, result, payload, and the finisher of
  // exact records; stamps the record in a packed header. Returns true where the data must
  // stay unchanged (a reduce's other ranks: the schedule gets a copy where it writes).
  bool FillArgs(ScheduleKind kind, ScheduleArgs* args);
  void StartPreRound(const WindowNeeds* measured = nullptr);
  std::string Disagreement(const std::string& what) const;
  bool SpeculationMissed() const;
  MPI_Datatype PackedType(const PackedLayout* layout);
  // The operator and the element type are MPI's predefined ones (cached by their handles;
  // CheckPredefined looks).
  bool Predefined() {
    if (spec_.payload.op == kept_op_checked_ && spec_.payload.elem_type == kept_type_checked_)
      return kept_op_;
    return CheckPredefined();
  }
  bool CheckPredefined();
  // The speculation runs on the elements in place, its miss told by the messages' sizes
  // (an empty message from a rank that does not fit; ScheduleArgs::missed).
  bool SignalsShort() const noexcept;
  // The speculation on the MPI library carries a miss in an element of the agreed operator
  // (the top of this file).
  bool FlagsMiss() const noexcept;
  void FillFlagged(ScheduleArgs* args);
  bool FlagMissed() const noexcept;
  MPI_Op GenericOp(bool commutative);
  ScheduleArgs Base() const;
  // The length speculation (see the top of this file).
  bool FillSpeculating(ScheduleKind kind, ScheduleArgs* args);
  void FillSpeculation(ScheduleKind kind, ScheduleArgs* args);
  void WriteValue(unsigned char* to, std::size_t body) const noexcept;
  Next SpeculationCompleted();
  void StartBeside();
  void ChooseOwn();
#endif
  // In the class: both run at every launch of a speculating generation.
  // Whether this generation runs on the agreed length: by what is the same on every rank
  // for the object (its options, collective and memory), not by the operator or mode this
  // rank uses now, so that no rank runs the pre-round while the others speculate. A rank
  // whose message is packed (an operator of its own) or exact records does not fit (Load).
  bool Speculates() const noexcept {
    return length_known_ && spec_.check_length && spec_.length_in_header && !spec_.device_memory &&
           spec_.collective == Collective::allreduce;
  }
  ScheduleRequest OwnRequest() const noexcept {
    ScheduleRequest r;
    r.collective = spec_.collective;
    r.bytes = spec_.packed ? spec_.packed->bytes : spec_.payload.count * spec_.payload.elem_size;
    r.builtin_op = spec_.builtin_op;
    r.commutative = spec_.payload.commutative;
    r.determinism = spec_.determinism;
    r.device_memory = spec_.device_memory;
    return r;
  }
  void UsePacked(const PackedRecords& packed) noexcept {
    spec_.data = packed.data;
    finisher_.out = packed.rounded;
  }
  const unsigned char* Records() const;

  std::string object_;
  std::uint64_t object_code_ = 0;
  Env env_;
  LaunchSpec spec_;
  // The schedule this generation runs on, and the request it was chosen for (the next
  // generation with the same request takes the same choice without asking the selection).
  ScheduleKind run_kind_ = ScheduleKind::mpi_library;
  ScheduleParams run_params_;
  bool chose_ = false;
  ScheduleRequest chosen_for_;
  ScheduleDecision decision_;
  std::uint64_t decision_code_ = 0;  // its ScheduleCode, for the pre-round and the header
  Finisher finisher_;                // a window codec's rounding (spec_.window)
  std::string error_;
  bool pending_ = false;               // the pre-round or the description round runs
  bool describing_ = false;            // the description round runs
  bool speculative_ = false;           // the records run in a window agreed before
  bool finished_by_schedule_ = false;  // the schedule rounded the records
#if TRIBUTARY_HAVE_MPI
  // The last plain operator and datatype looked at (Predefined), and whether both are
  // predefined: a persistent request of the library's may be bound to them, and recursive
  // doubling may combine them either way round (SignalsShort).
  MPI_Op kept_op_checked_ = MPI_OP_NULL;
  MPI_Datatype kept_type_checked_ = MPI_DATATYPE_NULL;
  bool kept_op_ = false;
#endif
  // The length speculation: the request and length the ranks agreed on last (compared in a
  // pre-round with the schedule it chooses, or confirmed by a speculation since).
  bool length_known_ = false;
  std::uint64_t agreed_length_ = 0;
  ScheduleRequest agreed_request_;
  bool agreed_whole_ = false;      // the agreed schedule moves the message whole: a header
  bool speculating_ = false;       // this generation runs on the agreed length, no pre-round
  bool beside_ = false;            // with the pre-round beside the schedule, not a header
  bool stand_in_ = false;          // and sends the stand-in (its value differs from the agreed)
  bool rechoose_ = false;          // the speculation missed: the schedule is chosen again
  bool beside_running_ = false;    // the pre-round beside the schedule has not completed
  bool after_beside_ = false;      // Poll decides on a schedule that has completed
  bool short_signal_ = false;      // the messages' sizes tell a miss (SignalsShort)
  bool short_missed_ = false;      // a rank did not fit (written by the schedule too)
  bool flag_signal_ = false;       // the miss travels in an element of its own (FlagsMiss)
  std::uint64_t agreed_hash_ = 0;  // the record the ranks agreed on with the length
#if TRIBUTARY_HAVE_MPI
  std::vector<unsigned char> wire_;  // the header and the elements (or the stand-in)
  PackedLayout wire_layout_;         // one segment of the elements; none for a stand-in
  MPI_Comm comm_ = MPI_COMM_NULL;    // the Context's communicator
  int tag_ = 0;                      // the generation's tag block (the rounds use its top)
  DebugLevel debug_ = DebugLevel::basic;
  std::unique_ptr<Agreement> agreement_;
  // The schedule the pre-round compares: the one run, or this rank's own choice where it
  // sent a stand-in in a speculation (ChooseOwn).
  bool chosen_ = false;  // the schedule below is this generation's
  ScheduleKind kind_ = ScheduleKind::mpi_library;
  ScheduleParams params_;
  std::uint64_t record_hash_ = 0;    // this generation's record (0: not compared)
  std::uint64_t schedule_code_ = 0;  // this generation's schedule choice (0: not yet)
  std::uint64_t record_op_ = 0;      // the operator's code in the record (fingerprinted)
  // The last record hashed, and its hash: a generation started like the last one (the usual
  // case) compares seven fields instead of hashing them again.
  AgreementRecord hashed_record_;
  std::uint64_t hashed_ = 0;  // RecordHash(hashed_record_), 0: none yet
  MPI_Datatype packed_type_ = MPI_DATATYPE_NULL;
  std::size_t packed_type_bytes_ = 0;
  const PackedLayout* packed_type_layout_ = nullptr;    // the layout its attribute names
  MPI_Op generic_ops_[2] = {MPI_OP_NULL, MPI_OP_NULL};  // GenericMpiOp, not commutative / so
  // What the speculation sends, from the generation the ranks agreed on: whether its
  // operator and element type were predefined, and where the miss travels in an element of
  // their own, that operator and type and the element's two values (a rank that fits, one
  // that does not).
  bool agreed_predefined_ = false;
  bool agreed_flag_ = false;
  MPI_Op agreed_op_ = MPI_OP_NULL;
  MPI_Datatype agreed_type_ = MPI_DATATYPE_NULL;
  std::size_t agreed_elem_ = 0;
  unsigned char flag_fits_[8] = {};
  unsigned char flag_misses_[8] = {};
  // The flag element sent (one of the two above), which the schedule replaces with the
  // combined one on completion (ScheduleArgs::flag); the elements travel in place but for
  // a stand-in's zeros or a contribution apart from the data (then in wire_).
  unsigned char flag_[8] = {};
#endif
};

}  // namespace tributary::detail
