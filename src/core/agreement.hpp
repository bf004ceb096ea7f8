// The cross-rank agreement of one object's generations (docs/reductions.md, "Ranks that
// disagree"). The pre-round: one small allreduce (Tributary's own schedule for it) that gives
// every rank the maximum and minimum of the value lengths, of a hash of the agreement
// record and of the schedule chosen, and the exact-sum window that fits every rank's data.
// When the hashes differ, the description round (an allgather of each rank's fields as
// numbers and names) lets every rank name what differs, with each rank's value. Both rounds
// run in the tags of the generation's block that the schedules leave free.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "schedules/schedule.hpp"
#include "tributary/detail/core/agreement_record.hpp"
#include "tributary/detail/core/message_spec.hpp"
#include "tributary/schedule_kind.hpp"

namespace tributary::detail {

/// The fields the ranks compare, in the order a message names them.
enum class AgreementField : int {
  object,
  collective,
  root,
  op,
  element,
  count,
  determinism,
  schedule,
  kCount
};
inline constexpr int kAgreementFields = static_cast<int>(AgreementField::kCount);

/// One rank's generation as the description round carries it: per field a code (compared)
/// and a name (printed).
struct AgreementView {
  std::uint64_t code[kAgreementFields] = {};
  std::string text[kAgreementFields];
};

/// Whether two records hash alike (the fields RecordHash reads, for the same object).
inline bool SameRecord(const AgreementRecord& a, const AgreementRecord& b) noexcept {
  return a.op == b.op && a.element == b.element && a.elem_size == b.elem_size &&
         a.count == b.count && a.collective == b.collective && a.root == b.root &&
         a.determinism == b.determinism;
}
/// The hash of a record and an object's code (never 0: 0 means "not compared"), below 2^62 so
/// that its negation fits the pre-round's 64-bit integers.
std::uint64_t RecordHash(const AgreementRecord& record, std::uint64_t object) noexcept;
/// The code of a schedule choice (0: not chosen yet, an exact sum before its window).
std::uint64_t ScheduleCode(ScheduleKind kind, const ScheduleParams& params) noexcept;
/// This rank's view of a generation for the description round.
AgreementView ViewOf(const AgreementRecord& record, std::uint64_t record_op,
                     const std::string& object, std::uint64_t object_code, std::uint64_t length,
                     bool dynamic, const std::string& schedule, std::uint64_t schedule_code);

#if TRIBUTARY_HAVE_MPI
class Agreement {
 public:
  /// What this rank brings to the pre-round.
  struct Input {
    std::uint64_t record = 0;    ///< RecordHash, or 0.
    std::uint64_t schedule = 0;  ///< ScheduleCode, or 0.
    std::int64_t length = 0;     ///< Compared where check_length.
    bool check_length = false;
    WindowNeeds window;  ///< An exact sum's needs (NoWindow otherwise).
    /// The pre-round's schedule: recursive doubling, or a k-nomial or binomial tree
    /// (ScheduleService::AgreementSchedule); the same on every rank.
    ScheduleKind kind = ScheduleKind::recursive_doubling;
    ScheduleParams params;
  };
  /// Starts the pre-round on `base` (communicator and the generation's tag block).
  void StartPreRound(const Input& input, ScheduleArgs base);
  /// Starts the description round with this rank's view (after a pre-round whose verdict
  /// was `differ`, or a packed message whose header says the ranks disagree).
  void StartDescriptions(const AgreementView& mine, ScheduleArgs base);
  /// Advances the round running; true once it is complete on this rank. Never blocks.
  bool Progress();
  /// True while a round runs (its requests must not be freed).
  bool Active() const noexcept { return active_; }
  /// A failed generation's round: cancels its receives (Schedule::Cancel); Quiet says
  /// when nothing is pending any more.
  bool Cancel() noexcept;
  bool Quiet() noexcept;
  /// Lets go of a round still in flight without freeing its requests (they may still write).
  void Release() noexcept;

  enum class Verdict { agreed, lengths_differ, differ };
  /// After the pre-round.
  Verdict Evaluate() const noexcept;
  std::int64_t MinLength() const noexcept { return -values_[1]; }
  std::int64_t MaxLength() const noexcept { return values_[0]; }
  /// The window every rank's data fits, for `ranks` ranks.
  WindowNeeds AgreedWindow(int ranks) const noexcept;
  /// After the description round: what differs, with each rank's value ("operator: Sum on
  /// rank 0, Max on ranks 1-2; element type: ..."); the same text on every rank.
  std::string Differences() const;

 private:
  void Run(ScheduleArgs args, ScheduleKind kind);
  // Tags kTag.. of the generation's block (the schedules use the lower ones).
  static constexpr int kTag = 5;
  std::int64_t values_[10] = {};
  std::vector<unsigned char> mine_, all_;
  int ranks_ = 1;
  std::unique_ptr<Schedule> schedule_;  // kept and re-armed across generations
  bool active_ = false;
};
#else
class Agreement {};
#endif

}  // namespace tributary::detail
