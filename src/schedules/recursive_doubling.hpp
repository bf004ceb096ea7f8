// Recursive doubling: allreduce and allgather for any rank count.
#pragma once

#include "schedules/p2p.hpp"

namespace tributary::detail {

/// Recursive doubling for any rank count: the first 2·(p − 2^⌊lg p⌋) ranks fold in pairs
/// first, the power of two exchanges at distance 1, 2, 4, … (lower ∘ higher at every step:
/// order-keeping, identical bits on both partners), and the folded ranks get the result.
/// Allreduce exchanges the whole vector; allgather exchanges the blocks gathered so far.
class RecursiveDoublingSchedule final : public P2PSchedule {
 public:
  explicit RecursiveDoublingSchedule(const ScheduleArgs& args);
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return ScheduleKind::recursive_doubling; }

 private:
  enum class Step { fold_in, exchange, fold_out, done };
  void PostExchange();
  int FirstRank(int newrank) const { return newrank < rem_ ? 2 * newrank : newrank + rem_; }
  unsigned char* Result() const { return static_cast<unsigned char*>(args_.result); }
  // With the short-message signal (ScheduleArgs::missed) the data stays untouched until the
  // result is known to stand: this rank's running value (acc_) moves between two scratch
  // buffers, and reaches the data at the end (Settle).
  unsigned char* Mine() const { return apart_ ? acc_ : Data(); }
  unsigned char* Incoming(std::size_t bytes);
  void CombineIncoming(const unsigned char* received, bool partner_lower);
  void Settle();
  Step step_ = Step::done;
  bool apart_ = false;
  unsigned char* acc_ = nullptr;
  unsigned char* spare_[2] = {nullptr, nullptr};
  int pof2_ = 1, newrank_ = -1, mask_ = 1, partner_ = -1;
};

}  // namespace tributary::detail
