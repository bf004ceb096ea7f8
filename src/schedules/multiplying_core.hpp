// The rounds of recursive multiplying for a rank count and radix: what the schedule runs
// and the cluster model prices. No MPI here (the selection's model includes it).
#pragma once

#include <algorithm>

namespace tributary::detail {

/// Recursive multiplying on `size` ranks in groups of `radix` (RecursiveMultiplyingSchedule):
/// the core of radix^full · last ranks, the largest such count not above size (radix^full
/// <= size < radix^(full+1), last = ⌊size / radix^full⌋), which is more than size / 2, so
/// the other `rem` ranks fold in pairs first. Round r < full runs groups of `radix` at
/// stride radix^r; where last > 1, one more round runs groups of `last`.
struct MultiplyingCore {
  int radix = 2;  ///< At most the rank count (2 at least).
  int full = 0;
  int last = 1;
  int rem = 0;

  MultiplyingCore() = default;
  MultiplyingCore(int size, int wanted_radix) noexcept
      : radix(std::min(std::max(2, wanted_radix), std::max(2, size))) {
    long long power = 1;
    while (power * radix <= size) {
      power *= radix;
      ++full;
    }
    last = static_cast<int>(size / power);
    rem = size - static_cast<int>(power) * last;
  }
  int Rounds() const noexcept { return full + (last > 1 ? 1 : 0); }
  int Group(int round) const noexcept { return round < full ? radix : last; }
};

}  // namespace tributary::detail
