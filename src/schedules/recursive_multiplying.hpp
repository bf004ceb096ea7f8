// Recursive multiplying: recursive doubling with groups of k ranks per round.
#pragma once

#include "schedules/multiplying_core.hpp"
#include "schedules/p2p.hpp"

namespace tributary::detail {

/// Allreduce in groups of up to ScheduleParams::radix ranks per round (recursive doubling
/// when the radix is 2): log_k p rounds where recursive doubling takes log_2 p, each round
/// an exchange with the group's other k − 1 ranks. For any rank count: the rounds of
/// MultiplyingCore on a core of more than p/2 ranks; the others fold in pairs first and get
/// the result at the end, as in recursive doubling. Every member of a group
/// combines the group's values in rank order, (x0 ∘ x1) ∘ x2 ∘ …: order-keeping, identical
/// bits on every member.
class RecursiveMultiplyingSchedule final : public P2PSchedule {
 public:
  explicit RecursiveMultiplyingSchedule(const ScheduleArgs& args);
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return ScheduleKind::recursive_multiplying; }

 private:
  enum class Step { fold_in, exchange, fold_out, done };
  void PostExchange();
  void CombineGroup();
  int GroupSize() const { return core_.Group(round_); }
  unsigned char* Slot(int member);
  Step step_ = Step::done;
  MultiplyingCore core_;
  int newrank_ = -1, round_ = 0, stride_ = 1, digit_ = 0;
};

}  // namespace tributary::detail
