// Reduce by a reduce-scatter and a gather to the root (Rabenseifner's reduce).
#pragma once

#include "schedules/rabenseifner.hpp"

namespace tributary::detail {

/// Reduce: RabenseifnerSchedule's reduce-scatter in groups of ScheduleParams::radix, then
/// a gather that undoes its rounds towards the root: in each round, from the last
/// reduce-scatter round back to the first, the group member on the root's side collects
/// the others' ranges and the others are done. Every rank sends (p−1)/p·n bytes or fewer
/// and the root receives (p−1)/p·n, where a tree's root receives n per child: for large
/// messages. Order-keeping, as the reduce-scatter is. With the fold-in of a rank count
/// that is not a power of two, an even root below 2·rem gets the result from its partner.
class ReduceScatterGatherSchedule final : public RabenseifnerSchedule {
 public:
  explicit ReduceScatterGatherSchedule(const ScheduleArgs& args);
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return ScheduleKind::reduce_scatter_gather; }

 private:
  /// Posts this rank's part of the next gather round; false when it only sent (it is done
  /// once the send completes).
  bool PostGatherToRoot();

  int target_ = 0;        // the new rank that collects the result: the root's or its partner's
  bool collects_ = true;  // still collecting (has not handed its range on)
};

}  // namespace tributary::detail
