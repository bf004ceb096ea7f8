// Recursive multiplying: recursive doubling with groups of k ranks per round.
#pragma once

#include "schedules/p2p.hpp"

namespace tributary::detail {

/// Allreduce in groups of up to ScheduleParams::radix ranks per round (recursive doubling
/// when the radix is 2): log_k p rounds where recursive doubling takes log_2 p, each round
/// an exchange with the group's other k − 1 ranks. For any rank count: the core of
/// m = k^a · j ranks (k^a <= p < k^(a+1), j = ⌊p / k^a⌋) runs a rounds of k and, where
/// j > 1, one of j; the first 2·(p − m) ranks fold in pairs first (m > p/2) and the folded
/// ones get the result at the end, as in recursive doubling. Every member of a group
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
  int ToRank(int newrank) const { return newrank < rem_ ? 2 * newrank + 1 : newrank + rem_; }
  // Round `round_`'s group size: the radix for the first `full_` rounds, then `last_`.
  int GroupSize() const { return round_ < full_ ? radix_ : last_; }
  unsigned char* Slot(int member);
  Step step_ = Step::done;
  int radix_ = 2, full_ = 0, last_ = 1, rem_ = 0, newrank_ = -1;
  int round_ = 0, stride_ = 1, digit_ = 0;
};

}  // namespace tributary::detail
