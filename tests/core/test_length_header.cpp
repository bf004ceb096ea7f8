// The length check of DebugLevel::basic after the first generation (src/core/message.hpp,
// "the length speculation"): after a generation whose pre-round agreed, the next ones run
// without it on the agreed length, and still fail on every rank where one rank's length,
// operator or element count changed, with the same messages as the pre-round gives; where
// every rank changed its length or operator alike, the generation completes on the new one.
// On recursive doubling (the length told by the messages' sizes), on a k-nomial tree and
// the MPI library's schedule (a header), and on one that splits the message (the length
// round then runs beside it); a reduce keeps the length round.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::DebugLevel;
using tributary::ScheduleKind;
using tributary::TaskStatus;
using tributary::UsageError;
using tributary::testing::Rank;
using tributary::testing::Size;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string Others() { return Size() == 2 ? "rank 1" : "ranks 1-" + std::to_string(Size() - 1); }

// Polls to completion; the UsageError's message, or "" when it completed.
std::string Outcome(const std::function<TaskStatus()>& poll) {
  try {
    while (poll() != TaskStatus::complete) {
    }
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

class LengthHeader : public ::testing::TestWithParam<ScheduleKind> {
 protected:
  // A failed generation leaves `val` as it was, but on a schedule that splits the message:
  // there the length check runs beside it, on the value in place (docs/reductions.md).
  bool Untouched(double now, double before) const {
    return GetParam() == ScheduleKind::rabenseifner || now == before;
  }
  // Starts a generation of three elements of 1.0 on every rank (`start`) after the ranks
  // agreed on that length, and polls it: on more than one rank it must fail on every rank
  // and keep `val`; the message, for the caller to check what it names.
  std::string FailsOnEveryRank(tributary::AllReduce<std::vector<double>>& v,
                               const std::function<void()>& start) const {
    v.val.assign(3, 1.0);
    start();
    const std::string msg = Outcome([&] { return v.CheckReduce(); });
    if (Size() > 1)
      TRIBUTARY_EXPECT_ALL(!msg.empty() && Untouched(v.val[0], 1.0));
    else
      TRIBUTARY_EXPECT_ALL(msg.empty() && v.val[0] == 1.0);
    return msg;
  }
  tributary::ContextOptions Basic() const {
    tributary::ContextOptions o;
    o.debug = DebugLevel::basic;
    o.allreduce_schedule = GetParam();
    o.reduce_schedule = GetParam() == ScheduleKind::mpi_library ? ScheduleKind::mpi_library
                                                                : ScheduleKind::binomial;
    return o;
  }
};

// Runs generation after generation of `v` with `n(rank)` elements of value rank + 1 and
// the sum, and checks each: the sum where the lengths agree, the lengths error on every
// rank where they do not.
void ExpectSums(tributary::AllReduce<std::vector<double>>& v, std::size_t n) {
  v.val.assign(n, Rank() + 1.0);
  v.StartReduce(tributary::Sum{});
  const std::string msg = Outcome([&] { return v.CheckReduce(); });
  const double sum = Size() * (Size() + 1) / 2.0;
  bool ok = msg.empty() && v.val.size() == n;
  for (double x : v.val) ok = ok && x == sum;
  TRIBUTARY_EXPECT_ALL(ok);
  if (!ok) ADD_FAILURE() << "generation " << v.Generation() << ": " << msg;
}

TEST_P(LengthHeader, LengthsThatChangeAlikeGoOn) {
  tributary::Context ctx(Basic());
  tributary::AllReduce<std::vector<double>> v(ctx, "profile");
  for (std::size_t n : {3, 3, 3, 5, 5, 1, 0, 0, 200, 200, 3})
    ExpectSums(v, n);  // the speculation hits, misses and runs again, and hits again
}

TEST_P(LengthHeader, OneRanksLengthChangesAfterAgreeing) {
  tributary::Context ctx(Basic());
  tributary::AllReduce<std::vector<double>> v(ctx, "norms");
  ExpectSums(v, 4);
  ExpectSums(v, 4);
  v.val.assign(Rank() == 0 ? 2 : 4, 1.0);  // rank 0 shrinks, the others keep the length
  v.StartReduce(tributary::Sum{});
  std::string msg = Outcome([&] { return v.CheckReduce(); });
  if (Size() > 1)
    TRIBUTARY_EXPECT_ALL(Contains(msg, "lengths differ across ranks") &&
                         Contains(msg, "between 2 and 4") &&
                         Contains(msg, "norms' (object 0), generation 3") &&
                         v.val.size() == (Rank() == 0 ? 2u : 4u) && Untouched(v.val[0], 1.0));
  else
    TRIBUTARY_EXPECT_ALL(msg.empty());
  ExpectSums(v, 4);  // agreeing again, it completes (the pre-round runs again first)
  v.val.assign(Rank() == Size() - 1 ? 7 : 4, 1.0);  // the last rank grows
  v.StartReduce(tributary::Sum{});
  msg = Outcome([&] { return v.CheckReduce(); });
  if (Size() > 1)
    TRIBUTARY_EXPECT_ALL(Contains(msg, "lengths differ across ranks") &&
                         Contains(msg, "between 4 and 7"));
  else
    TRIBUTARY_EXPECT_ALL(msg.empty());
  ExpectSums(v, 4);
}

// Whichever rank's length changes (a leaf of the fold-in, a partner in the exchanges, the
// last rank), every rank fails and keeps its value as it was. At 5 elements and at 600
// (4800 bytes: the MPI library's schedule posts MPI_Iallreduce on a copy there instead of
// restarting a persistent request).
TEST_P(LengthHeader, AnyOneRankThatDoesNotFitLeavesEveryValueAsItWas) {
  tributary::Context ctx(Basic());
  tributary::AllReduce<std::vector<double>> v(ctx, "field");
  for (std::size_t n : {5, 600}) {
    const std::string between = "between " + std::to_string(n - 1) + " and " + std::to_string(n);
    for (int odd = 0; odd < Size(); ++odd) {
      ExpectSums(v, n);
      ExpectSums(v, n);
      v.val.assign(Rank() == odd ? n - 1 : n, Rank() + 1.0);
      v.StartReduce(tributary::Sum{});
      const std::string msg = Outcome([&] { return v.CheckReduce(); });
      bool kept = v.val.size() == (Rank() == odd ? n - 1 : n);
      for (double x : v.val) kept = kept && Untouched(x, Rank() + 1.0);
      if (Size() > 1)
        TRIBUTARY_EXPECT_ALL(Contains(msg, "lengths differ across ranks") &&
                             Contains(msg, between) && kept);
      else
        TRIBUTARY_EXPECT_ALL(msg.empty());
    }
    ExpectSums(v, n);
  }
}

// Every rank changes the operator alike after agreeing: the generation completes with it.
TEST_P(LengthHeader, OperatorsThatChangeAlikeGoOn) {
  tributary::Context ctx(Basic());
  tributary::AllReduce<std::vector<double>> v(ctx, "extent");
  ExpectSums(v, 6);
  ExpectSums(v, 6);
  for (int k = 0; k < 2; ++k) {
    v.val.assign(6, Rank() + 1.0);
    v.StartReduce(tributary::Max{});
    const std::string msg = Outcome([&] { return v.CheckReduce(); });
    bool ok = msg.empty() && v.val.size() == 6;
    for (double x : v.val) ok = ok && x == Size();
    TRIBUTARY_EXPECT_ALL(ok);
    if (!ok) ADD_FAILURE() << msg;
  }
  ExpectSums(v, 6);
}

TEST_P(LengthHeader, OperatorsDifferAfterAgreeing) {
  tributary::Context ctx(Basic());
  tributary::AllReduce<std::vector<double>> v(ctx, "profile");
  ExpectSums(v, 3);
  v.val.assign(3, 1.0);
  if (Rank() == 0)
    v.StartReduce(tributary::Max{});
  else
    v.StartReduce(tributary::Sum{});
  const std::string msg = Outcome([&] { return v.CheckReduce(); });
  if (Size() > 1)
    TRIBUTARY_EXPECT_ALL(Contains(msg, "operator: Max on rank 0, Sum on " + Others()) &&
                         Contains(msg, "found at DebugLevel::basic") && Untouched(v.val[0], 1.0));
  else
    TRIBUTARY_EXPECT_ALL(msg.empty());
  // A length and the operator at once: both named.
  v.val.assign(Rank() == 0 ? 2 : 3, 1.0);
  if (Rank() == 0)
    v.StartReduce(tributary::Sum{});
  else
    v.StartReduce(tributary::Min{});
  const std::string both = Outcome([&] { return v.CheckReduce(); });
  if (Size() > 1)
    TRIBUTARY_EXPECT_ALL(Contains(both, "operator: Sum on rank 0, Min on " + Others()) &&
                         Contains(both, "count: 2 elements on rank 0, 3 elements on " + Others()));
  else
    TRIBUTARY_EXPECT_ALL(both.empty());
  ExpectSums(v, 3);
}

// One rank takes an operator of its own (not an MPI operator) after agreeing on MPI_SUM:
// its message must still pair with the others' (on recursive doubling: the elements in
// place, with no header), and every rank fails naming the operators.
struct Plus {
  static constexpr bool commutative = true;
  static double identity() { return 0; }
  void operator()(const double& in, double& inout) const { inout += in; }
};

TEST_P(LengthHeader, OneRankTakesAnOperatorOfItsOwnAfterAgreeing) {
  tributary::Context ctx(Basic());
  tributary::AllReduce<std::vector<double>> v(ctx, "mass");
  ExpectSums(v, 3);
  ExpectSums(v, 3);
  const std::string msg = FailsOnEveryRank(v, [&] {
    if (Rank() == 0)
      v.StartReduce(Plus{});
    else
      v.StartReduce(tributary::Sum{});
  });
  if (Size() > 1) {
    TRIBUTARY_EXPECT_ALL(Contains(msg, "operator: ") && Contains(msg, "Sum on " + Others()));
    if (!Contains(msg, "operator: ")) ADD_FAILURE() << msg;
  }
  ExpectSums(v, 3);
}

// One rank asks for results that do not depend on the rank count (exact records) after
// agreeing in the fast mode: every rank fails naming the modes, none hangs.
TEST_P(LengthHeader, OneRankChangesItsDeterminismAfterAgreeing) {
  tributary::Context ctx(Basic());
  tributary::AllReduce<std::vector<double>> v(ctx, "energy");
  ExpectSums(v, 3);
  ExpectSums(v, 3);
  const std::string msg = FailsOnEveryRank(v, [&] {
    if (Rank() == 0) v.SetDeterminism(tributary::Determinism::rank_count_independent);
    v.StartReduce(tributary::Sum{});
  });
  if (Size() > 1) {
    TRIBUTARY_EXPECT_ALL(
        Contains(msg, "determinism: rank_count_independent on rank 0, fast on " + Others()));
    if (!Contains(msg, "determinism: ")) ADD_FAILURE() << msg;
  }
  v.SetDeterminism(tributary::Determinism::fast);
  ExpectSums(v, 3);
  // Every rank alike: the generation completes in the new mode.
  v.SetDeterminism(tributary::Determinism::rank_count_independent);
  ExpectSums(v, 3);
  ExpectSums(v, 3);
}

// Whichever operator the ranks agreed on, one rank whose length changes makes every rank
// fail and keep its value (on the MPI library's schedule, the miss is an element of that
// operator's own: its neutral value, or the value that absorbs).
template <class E, class Op>
void OneRankShrinks(tributary::Context& ctx, Op op, E expect, bool splits) {
  tributary::AllReduce<std::vector<E>> v(ctx, "series");
  const E mine = static_cast<E>(Rank() + 1);
  for (int k = 0; k < 2; ++k) {
    v.val.assign(4, mine);
    v.StartReduce(op);
    const std::string msg = Outcome([&] { return v.CheckReduce(); });
    bool ok = msg.empty() && v.val.size() == 4;
    for (E x : v.val) ok = ok && x == expect;
    TRIBUTARY_EXPECT_ALL(ok);
  }
  const bool odd = Rank() == Size() / 2;
  v.val.assign(odd ? 3 : 4, mine);
  v.StartReduce(op);
  const std::string msg = Outcome([&] { return v.CheckReduce(); });
  bool kept = v.val.size() == (odd ? 3u : 4u);
  for (E x : v.val) kept = kept && (splits || x == mine);
  if (Size() > 1)
    TRIBUTARY_EXPECT_ALL(Contains(msg, "lengths differ across ranks") && kept);
  else
    TRIBUTARY_EXPECT_ALL(msg.empty());
  if (Size() > 1 && !Contains(msg, "lengths differ across ranks")) ADD_FAILURE() << msg;
}

TEST_P(LengthHeader, EveryOperatorCatchesOneRankThatDoesNotFit) {
  tributary::Context ctx(Basic());
  const bool splits = GetParam() == ScheduleKind::rabenseifner;
  double prod = 1;
  long band = ~0L, bor = 0;
  for (int r = 1; r <= Size(); ++r) {
    prod *= r;
    band &= r;
    bor |= r;
  }
  OneRankShrinks(ctx, tributary::Sum{}, Size() * (Size() + 1) / 2.0, splits);
  OneRankShrinks(ctx, tributary::Prod{}, prod, splits);
  OneRankShrinks(ctx, tributary::Min{}, 1.0, splits);
  OneRankShrinks(ctx, tributary::Max{}, static_cast<double>(Size()), splits);
  OneRankShrinks(ctx, tributary::BAnd{}, band, splits);
  OneRankShrinks(ctx, tributary::BOr{}, bor, splits);
  OneRankShrinks(ctx, tributary::Min{}, 1L, splits);
  OneRankShrinks(ctx, tributary::LAnd{}, 1L, splits);
  OneRankShrinks(ctx, tributary::LOr{}, 1L, splits);
}

// Every rank changes its operator alike, to one that does not commute: the schedule agreed
// for a commutative one may not keep the order, so the speculation gives way to the
// pre-round and a schedule chosen for the new operator.
struct First {  // a ∘ b = a: the lowest rank's value
  static constexpr bool commutative = false;
  static double identity() { return 0; }
  void operator()(const double& in, double& inout) const { inout = in; }
};

TEST_P(LengthHeader, AnOperatorThatDoesNotCommuteAfterAgreeing) {
  if (GetParam() != ScheduleKind::recursive_doubling) GTEST_SKIP() << "the selection tree's";
  tributary::ContextOptions o;
  o.debug = DebugLevel::basic;  // the selection tree chooses
  tributary::Context ctx(o);
  tributary::AllReduce<std::vector<double>> v(ctx, "order");
  ExpectSums(v, 2);
  ExpectSums(v, 2);
  v.val.assign(2, Rank() + 1.0);
  v.StartReduce(First{});
  const std::string msg = Outcome([&] { return v.CheckReduce(); });
  const bool ok = msg.empty() && v.val.size() == 2 && v.val[0] == 1.0 && v.val[1] == 1.0;
  TRIBUTARY_EXPECT_ALL(ok);
  if (!ok) ADD_FAILURE() << msg << " " << (v.val.empty() ? -1.0 : v.val[0]);
  ExpectSums(v, 2);
}

TEST_P(LengthHeader, ReduceToTheRoot) {
  tributary::Context ctx(Basic());
  tributary::Reduce<std::vector<int>> r(ctx, "counts");
  const int root = Size() - 1;
  for (std::size_t n : {2, 2, 6, 6}) {
    r.val.assign(n, 1);
    r.StartReduce(root, tributary::Sum{});
    const std::string msg = Outcome([&] { return r.CheckReduce(); });
    TRIBUTARY_EXPECT_ALL(msg.empty() && r.val.size() == n &&
                         (Rank() != root || r.val[n - 1] == Size()) &&
                         (Rank() == root || r.val[0] == 1));
  }
  r.val.assign(Rank() == 0 ? 5 : 6, 1);
  r.StartReduce(root, tributary::Sum{});
  const std::string msg = Outcome([&] { return r.CheckReduce(); });
  if (Size() > 1)
    TRIBUTARY_EXPECT_ALL(Contains(msg, "lengths differ across ranks") &&
                         Contains(msg, "between 5 and 6"));
  else
    TRIBUTARY_EXPECT_ALL(msg.empty());
}

std::string KindName(const ::testing::TestParamInfo<ScheduleKind>& param) {
  return param.param == ScheduleKind::mpi_library             ? "MpiLibrary"
         : param.param == ScheduleKind::rabenseifner          ? "Splitting"
         : param.param == ScheduleKind::knomial               ? "OwnHeader"
         : param.param == ScheduleKind::recursive_multiplying ? "OwnHeaderInGroups"
                                                              : "OwnBySize";
}

// Recursive doubling tells the length by its messages' sizes, the k-nomial tree, recursive
// multiplying and the MPI library by a header; Rabenseifner splits the message into pieces:
// the length round runs beside it.
INSTANTIATE_TEST_SUITE_P(Schedules, LengthHeader,
                         ::testing::Values(ScheduleKind::recursive_doubling, ScheduleKind::knomial,
                                           ScheduleKind::recursive_multiplying,
                                           ScheduleKind::mpi_library, ScheduleKind::rabenseifner),
                         KindName);

}  // namespace
