// Rabenseifner's allreduce: reduce-scatter by recursive halving, allgather by doubling.
#pragma once

#include <cstddef>
#include <vector>

#include "schedules/p2p.hpp"

namespace tributary::detail {

/// Rabenseifner's allreduce: a reduce-scatter by recursive halving followed by an
/// allgather by recursive doubling, with the fold-in of RecursiveDoublingSchedule. The
/// halving runs at distance 1, 2, 4, … so that every partial covers a contiguous range of
/// ranks: order-keeping. Each element is finished by one rank, so all ranks get its bits.
class RabenseifnerSchedule final : public P2PSchedule {
 public:
  explicit RabenseifnerSchedule(const ScheduleArgs& args);
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return ScheduleKind::rabenseifner; }

 private:
  enum class Step { fold_in, scatter, gather, fold_out, done };
  void PostScatter();
  void PostGather();
  int ToRank(int newrank) const { return newrank < rem_ ? 2 * newrank + 1 : newrank + rem_; }
  Step step_ = Step::done;
  int pof2_ = 1, rem_ = 0, newrank_ = -1, mask_ = 1, partner_ = -1;
  std::size_t lo_ = 0, hi_ = 0;                  // the range this rank holds
  std::vector<std::size_t> ranges_;              // (lo, hi) before each halving step
  std::size_t keep_lo_ = 0, keep_hi_ = 0;        // the half kept in the current step
};

}  // namespace tributary::detail
