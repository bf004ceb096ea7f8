// Helpers for tests that run on several ranks: collective assertions that agree on
// pass/fail across ranks before asserting, so that no rank returns early from a test while
// the others wait in a collective. They work in the serial build too (one rank).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tributary::testing {

/// This process's rank and the number of ranks in the test's world.
int Rank();
int Size();

/// True on every rank when `local` is true on every rank (a collective).
bool AllTrue(bool local);
/// True on every rank when `local` is true on some rank (a collective).
bool AnyTrue(bool local);
/// Every rank's value, in rank order (a collective).
std::vector<std::int64_t> AllGather(std::int64_t local);
/// Every rank's bytes, in rank order (a collective; sizes may differ).
std::vector<std::string> AllGatherBytes(const std::string& local);
/// A barrier over the test world.
void Barrier();

}  // namespace tributary::testing

/// Expects `cond` on every rank; the failure names the ranks where it was false. Every rank
/// must reach it (it is a collective). Rank 0 records the failure; the test main then fails
/// the test on every rank.
#define TRIBUTARY_EXPECT_ALL(cond)                                                        \
  do {                                                                                    \
    const bool tributary_ok_ = static_cast<bool>(cond);                                   \
    const auto tributary_flags_ = ::tributary::testing::AllGather(tributary_ok_ ? 1 : 0); \
    std::string tributary_bad_;                                                           \
    for (std::size_t r_ = 0; r_ < tributary_flags_.size(); ++r_)                          \
      if (!tributary_flags_[r_]) tributary_bad_ += " " + std::to_string(r_);              \
    EXPECT_TRUE(tributary_bad_.empty() || ::tributary::testing::Rank() != 0)              \
        << "(" #cond ") false on rank(s):" << tributary_bad_;                             \
  } while (0)
