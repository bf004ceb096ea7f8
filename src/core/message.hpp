// The message unit: one reduction object's generations on the wire. From the typed layer's
// LaunchSpec to the bytes a schedule moves: the encodings (plain, packed behind a header,
// exact-sum window records), the agreement rounds before the data moves (lengths, the
// agreement record, the window; the description round after a disagreement), the
// speculation on an earlier window and its retry, the combine of packed messages and their
// MPI datatype. ReductionCore drives it through Start / Poll / Completed and never reads
// its bytes.
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

class Message {
 public:
  /// The message of the object named `object` (in the description round), whose kind and
  /// label hash to `object_code`.
  Message(std::string object, std::uint64_t object_code);
  ~Message();
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;

  /// Takes the typed layer's description of a new generation (its buffers stay the typed
  /// layer's and must live until the generation completes).
  void Load(const LaunchSpec& spec);
  /// What the schedule is chosen on; for exact records their size is known only once the
  /// window is agreed (ChoosesLate).
  ScheduleRequest Request() const noexcept;
  /// True where the schedule is chosen when it starts (StartSchedule), not at the launch:
  /// exact records, and a length speculation that missed (the length changed).
  bool ChoosesLate() const noexcept { return spec_.window != nullptr || rechoose_; }
  /// One rank: nothing to send, the result is the input (Finish rounds exact records).
  void RunAlone();

#if TRIBUTARY_HAVE_MPI
  /// Where the rounds of a generation run and what they check.
  struct Env {
    MPI_Comm comm = MPI_COMM_NULL;  ///< The Context's communicator.
    int tag = 0;                    ///< The generation's tag block (the rounds use its top).
    int rank = 0;
    int size = 1;
    DebugLevel debug = DebugLevel::basic;
    /// The object's Context and slot: a length speculation that missed chooses the
    /// schedule for the real length before the pre-round compares it.
    const ReductionHost* host = nullptr;
    int slot = -1;
  };
  /// What the core does next.
  enum class Next : std::uint8_t {
    wait,      ///< A round of the agreement runs: Poll.
    schedule,  ///< Start the schedule (FillArgs); then Completed once it is done.
    finished,  ///< The network phase is over (on a failed generation: nothing more to do).
    failed     ///< The ranks disagree (Error); none takes a result.
  };
  /// Starts the network phase of the loaded generation. `chosen`: the schedule `kind` with
  /// `params` is known now (it is part of the record the ranks compare).
  Next Start(const Env& env, bool chosen, ScheduleKind kind, const ScheduleParams& params);
  /// Advances the round of the agreement; `draining`: the generation failed already (no
  /// description round, no error of its own). Never blocks.
  Next Poll(bool draining);
  /// True while a round of the agreement runs (Poll).
  bool Waiting() const noexcept { return pending_; }
  /// Advances a pre-round that runs beside the schedule (a length speculation on a schedule
  /// that splits the message); nothing otherwise. Called with the schedule's progress.
  /// Never blocks.
  void ProgressBeside();
  /// The schedule's bytes for `kind`: data, input, result, payload, and the finisher of
  /// exact records; stamps the record in a packed header. Returns true where the data must
  /// stay unchanged (a reduce's other ranks: the schedule gets a copy where it writes).
  bool FillArgs(ScheduleKind kind, ScheduleArgs* args);
  /// The schedule has completed; `rounded`: it finished the exact records itself.
  /// finished, failed (the header says the ranks disagree), or wait (the speculation
  /// missed: the ranks agree on a window, then the schedule runs again).
  Next Completed(bool rounded, bool draining);
  /// A failed generation's round of the agreement: cancels its receives; Quiet says when
  /// nothing is pending any more; Release lets go of it without freeing its requests.
  bool Cancel() noexcept;
  bool Quiet() noexcept;
  void Release() noexcept;
  /// Frees the packed datatype; false where it cannot, MPI having finalised.
  bool FreeMpiObjects() noexcept;
#endif
  /// The result in place: exact records the schedule left unrounded are rounded into it.
  void Finish(int rank);
  /// Why the generation failed (Next::failed), without the object's name.
  const std::string& Error() const noexcept { return error_; }

 private:
#if TRIBUTARY_HAVE_MPI
  void StartPreRound(const WindowNeeds* measured = nullptr);
  std::string Disagreement(const std::string& what) const;
  bool SpeculationMissed() const;
  MPI_Datatype PackedType(const PackedLayout* layout);
  ScheduleArgs Base() const;
  // The length speculation (see the top of this file).
  void FillSpeculation(ScheduleKind kind, ScheduleArgs* args);
  Next SpeculationCompleted();
  void StartBeside();
  void ChooseOwn();
#endif
  bool Speculates() const noexcept;
  ScheduleRequest OwnRequest() const noexcept;
  void UsePacked(const PackedRecords& packed) noexcept {
    spec_.data = packed.data;
    finisher_.out = packed.rounded;
  }
  const unsigned char* Records() const;

  std::string object_;
  std::uint64_t object_code_ = 0;
  LaunchSpec spec_;
  Finisher finisher_;  // a window codec's rounding (spec_.window)
  std::string error_;
  bool pending_ = false;               // the pre-round or the description round runs
  bool describing_ = false;            // the description round runs
  bool speculative_ = false;           // the records run in a window agreed before
  bool finished_by_schedule_ = false;  // the schedule rounded the records
  // The length speculation: the request and length the ranks agreed on last (compared in a
  // pre-round with the schedule it chooses, or confirmed by a speculation since).
  bool length_known_ = false;
  std::uint64_t agreed_length_ = 0;
  ScheduleRequest agreed_request_;
  bool agreed_whole_ = false;    // the agreed schedule moves the message whole: a header
  bool speculating_ = false;     // this generation runs on the agreed length, no pre-round
  bool beside_ = false;          // with the pre-round beside the schedule, not a header
  bool stand_in_ = false;        // and sends the stand-in (its value differs from the agreed)
  bool rechoose_ = false;        // the speculation missed: the schedule is chosen again
  bool beside_running_ = false;  // the pre-round beside the schedule has not completed
  bool after_beside_ = false;    // Poll decides on a schedule that has completed
#if TRIBUTARY_HAVE_MPI
  std::vector<unsigned char> wire_;  // the header and the elements (or the stand-in)
  PackedLayout wire_layout_;         // one segment of the elements; none for a stand-in
  Env env_;
  std::unique_ptr<Agreement> agreement_;
  bool chosen_ = false;  // the schedule below is this generation's
  ScheduleKind kind_ = ScheduleKind::mpi_library;
  ScheduleParams params_;
  std::uint64_t record_hash_ = 0;    // this generation's record (0: not compared)
  std::uint64_t schedule_code_ = 0;  // this generation's schedule choice (0: not yet)
  std::uint64_t record_op_ = 0;      // the operator's code in the record (fingerprinted)
  MPI_Datatype packed_type_ = MPI_DATATYPE_NULL;
  std::size_t packed_type_bytes_ = 0;
  const PackedLayout* packed_type_layout_ = nullptr;  // the layout its attribute names
#endif
};

}  // namespace tributary::detail
