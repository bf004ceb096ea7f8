// Rabenseifner's allreduce: reduce-scatter by recursive halving, allgather by doubling.
// ReduceScatterGatherSchedule (reduce_scatter_gather.hpp) shares its reduce-scatter.
#pragma once

#include <cstddef>
#include <vector>

#include "schedules/p2p.hpp"

namespace tributary::detail {

/// Rabenseifner's allreduce: a reduce-scatter followed by an allgather that undoes it, with
/// the fold-in of RecursiveDoublingSchedule. Each reduce-scatter round splits the range a
/// group of ranks holds among them: groups of ScheduleParams::radix ranks (rounded down to
/// a power of two; the last round smaller where lg of the power of two left is not a
/// multiple) at stride 1, k, k², … so that every partial covers a contiguous range of
/// ranks and is combined in rank order: order-keeping. Radix 2 is recursive halving and
/// doubling (2 lg p rounds); radix k takes 2 ⌈log_k p⌉ rounds of k − 1 messages each, for
/// the same bytes. Each element is finished by one rank, so all ranks get its bits.
class RabenseifnerSchedule : public P2PSchedule {
 public:
  explicit RabenseifnerSchedule(const ScheduleArgs& args);
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return ScheduleKind::rabenseifner; }

 protected:
  enum class Step { fold_in, scatter, gather, fold_out, done };
  /// One reduce-scatter round, kept for the allgather that undoes it.
  struct Round {
    std::size_t lo, hi;  // the range the group held before it
    int stride, group;
  };
  void PostScatter();
  void PostGather();
  void CombineRound();
  /// The group member whose digit is j, in this rank's group of the round.
  int Member(const Round& r, int j) const {
    return CoreRank(newrank_ - Digit(r) * r.stride + j * r.stride);
  }
  int Digit(const Round& r) const { return newrank_ / r.stride % r.group; }
  /// The start of part j of the round's range split in `group` parts.
  static std::size_t Part(const Round& r, int j) {
    return r.lo + (r.hi - r.lo) * static_cast<std::size_t>(j) / static_cast<std::size_t>(r.group);
  }
  unsigned char* Slot(int j) { return scratch_.data() + static_cast<std::size_t>(j) * slot_bytes_; }

  Step step_ = Step::done;
  int pof2_ = 1, newrank_ = -1, radix_ = 2, stride_ = 1;
  std::size_t lo_ = 0, hi_ = 0;  // the range this rank holds
  std::vector<Round> rounds_;    // the reduce-scatter rounds done, in order
  std::size_t slot_bytes_ = 0;   // scratch per group member in the current round
};

}  // namespace tributary::detail
