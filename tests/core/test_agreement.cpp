// Ranks that start a generation differently get an error on every rank, never a silent
// wrong answer: at DebugLevel::full every disagreement (operator, element type, count,
// collective, root, determinism mode, which object) is named with each rank's value, for
// AllReduce, Reduce, Batch and AllGather, on Tributary's own schedules and on the MPI
// library's; at DebugLevel::basic what rides on a round sent anyway (docs/reductions.md,
// "Ranks that disagree"). Rank 0 differs from the others in every case.
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::Collective;
using tributary::DebugLevel;
using tributary::ScheduleKind;
using tributary::TaskStatus;
using tributary::UsageError;
using tributary::testing::Rank;
using tributary::testing::Size;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// "rank 1" or "ranks 1-3": the ranks other than 0, as the messages list them.
std::string Others() { return Size() == 2 ? "rank 1" : "ranks 1-" + std::to_string(Size() - 1); }

tributary::ContextOptions Options(DebugLevel level, bool library) {
  tributary::ContextOptions o;
  o.debug = level;
  o.allreduce_schedule = library ? ScheduleKind::mpi_library : ScheduleKind::recursive_doubling;
  o.reduce_schedule = library ? ScheduleKind::mpi_library : ScheduleKind::binomial;
  o.allgather_schedule = library ? ScheduleKind::mpi_library : ScheduleKind::recursive_doubling;
  return o;
}

// Polls to completion; returns the UsageError's message ("" when it completed).
std::string Outcome(const std::function<TaskStatus()>& poll) {
  try {
    while (poll() != TaskStatus::complete) {
    }
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// The generation polled by `poll` fails on every rank, naming `field` with rank 0's value
// `mine` and the other ranks' `theirs` (at one rank there is nothing to disagree with: it
// completes). Returns the message.
std::string ExpectNamed(const std::function<TaskStatus()>& poll, const std::string& field,
                        const std::string& mine, const std::string& theirs) {
  const std::string msg = Outcome(poll);
  if (Size() == 1) {
    TRIBUTARY_EXPECT_ALL(msg.empty());
    return msg;
  }
  const std::string expect = field + ": " + mine + " on rank 0, " + theirs + " on " + Others();
  const bool ok = Contains(msg, "started this generation differently") && Contains(msg, expect);
  TRIBUTARY_EXPECT_ALL(ok);
  if (!ok) ADD_FAILURE() << "expected \"" << expect << "\" in: " << msg;
  return msg;
}

// A user operator type and another one with the same signature.
struct Plus {
  static constexpr bool commutative = true;
  static double identity() { return 0; }
  void operator()(const double& in, double& inout) const { inout += in; }
};
struct Times {
  static constexpr bool commutative = true;
  static double identity() { return 1; }
  void operator()(const double& in, double& inout) const { inout *= in; }
};

void AddInts(void* in, void* inout, int* len, MPI_Datatype*) {
  for (int i = 0; i < *len; ++i) static_cast<int*>(inout)[i] += static_cast<int*>(in)[i];
}
void MaxInts(void* in, void* inout, int* len, MPI_Datatype*) {
  for (int i = 0; i < *len; ++i) {
    const int a = static_cast<int*>(in)[i];
    int& b = static_cast<int*>(inout)[i];
    b = a > b ? a : b;
  }
}

class Agreement : public ::testing::TestWithParam<bool> {
 protected:
  bool Library() const { return GetParam(); }
  tributary::ContextOptions Full() const { return Options(DebugLevel::full, Library()); }
};

TEST_P(Agreement, BuiltinOperatorsDifferInAllReduceAndReduce) {
  tributary::Context ctx(Full());
  tributary::AllReduce<double> a(ctx, "dt");
  a.val = 2.0;
  if (Rank() == 0)
    a.StartReduce(tributary::Sum{});
  else
    a.StartReduce(tributary::Max{});
  const std::string msg = ExpectNamed([&] { return a.CheckReduce(); }, "operator", "Sum", "Max");
  if (Size() > 1) {
    TRIBUTARY_EXPECT_ALL(Contains(msg, "AllReduce<double> 'dt' (object 0), generation 1") &&
                         a.State() == tributary::Phase::failed);
    TRIBUTARY_EXPECT_ALL(a.val == 2.0);  // no rank took a value
  }
  // The object goes on once the ranks agree.
  a.val = 1.0;
  a.StartReduce(tributary::Sum{});
  TRIBUTARY_EXPECT_ALL(Outcome([&] { return a.CheckReduce(); }).empty() && a.val == Size());

  tributary::Reduce<double> r(ctx, "total");
  r.val = 1.0;
  if (Rank() == 0)
    r.StartReduce(0, tributary::Min{});
  else
    r.StartReduce(0, tributary::Prod{});
  ExpectNamed([&] { return r.CheckReduce(); }, "operator", "Min", "Prod");
  if (Size() > 1) TRIBUTARY_EXPECT_ALL(r.val == 1.0);
}

TEST_P(Agreement, UserOperatorTypesDiffer) {
  tributary::Context ctx(Full());
  tributary::AllReduce<double> a(ctx, "user");
  a.val = 1.0;
  if (Rank() == 0)
    a.StartReduce(Plus{});
  else
    a.StartReduce(Times{});
  ExpectNamed([&] { return a.CheckReduce(); }, "operator", "(anonymous namespace)::Plus",
              "(anonymous namespace)::Times");
  tributary::Reduce<double> r(ctx, "user reduce");
  r.val = 1.0;
  if (Rank() == 0)
    r.StartReduce(0, Times{});
  else
    r.StartReduce(0, tributary::Sum{});
  ExpectNamed([&] { return r.CheckReduce(); }, "operator", "(anonymous namespace)::Times", "Sum");
}

TEST_P(Agreement, PlainMpiOpsDiffer) {
  tributary::Context ctx(Full());
  tributary::AllReduce<int> a(ctx, "mpi op");
  a.val = 1 + Rank();
  a.StartReduce(Rank() == 0 ? MPI_SUM : MPI_MAX);
  ExpectNamed([&] { return a.CheckReduce(); }, "operator", "MPI_SUM", "MPI_MAX");
  if (Size() > 1) TRIBUTARY_EXPECT_ALL(a.val == 1 + Rank());
  tributary::Reduce<int> r(ctx, "mpi op reduce");
  r.val = 1;
  r.StartReduce(0, Rank() == 0 ? MPI_PROD : MPI_SUM);
  ExpectNamed([&] { return r.CheckReduce(); }, "operator", "MPI_PROD", "MPI_SUM");
}

TEST_P(Agreement, UserCreatedMpiOpsDifferButTheSameFunctionAgrees) {
  // Created in a different order on rank 0: handles differ, functions do not.
  MPI_Op add = MPI_OP_NULL, max = MPI_OP_NULL;
  if (Rank() == 0) {
    MPI_Op_create(&MaxInts, 1, &max);
    MPI_Op_create(&AddInts, 1, &add);
  } else {
    MPI_Op_create(&AddInts, 1, &add);
    MPI_Op_create(&MaxInts, 1, &max);
  }
  {
    tributary::Context ctx(Full());
    tributary::AllReduce<int> a(ctx, "created");
    a.val = 2;
    a.StartReduce(add);
    TRIBUTARY_EXPECT_ALL(Outcome([&] { return a.CheckReduce(); }).empty() && a.val == 2 * Size());
    a.val = 1 + Rank();
    a.StartReduce(Rank() == 0 ? add : max);
    const std::string msg = Outcome([&] { return a.CheckReduce(); });
    if (Size() > 1)
      TRIBUTARY_EXPECT_ALL(Contains(msg, "operator: a user-created MPI_Op [") &&
                           Contains(msg, "] on rank 0, a user-created MPI_Op [") &&
                           Contains(msg, "] on " + Others()) && a.val == 1 + Rank());
    else
      TRIBUTARY_EXPECT_ALL(msg.empty());
    tributary::Reduce<int> r(ctx, "created reduce");
    r.val = 1;
    r.StartReduce(0, Rank() == 0 ? max : MPI_SUM);
    ExpectNamed([&] { return r.CheckReduce(); }, "operator", "a user-created MPI_Op", "MPI_SUM");
  }
  MPI_Op_free(&add);
  MPI_Op_free(&max);
}

TEST_P(Agreement, ElementTypesDifferInSizeOrKind) {
  tributary::Context ctx(Full());
  {
    std::unique_ptr<tributary::AllReduce<double>> d;
    std::unique_ptr<tributary::AllReduce<float>> f;
    if (Rank() == 0) {
      d = std::make_unique<tributary::AllReduce<double>>(ctx, "x");
      d->val = 1.0;
      d->StartReduce(tributary::Sum{});
    } else {
      f = std::make_unique<tributary::AllReduce<float>>(ctx, "x");
      f->val = 1.0f;
      f->StartReduce(tributary::Sum{});
    }
    const std::string msg = ExpectNamed([&] { return d ? d->CheckReduce() : f->CheckReduce(); },
                                        "element type", "double (8 B)", "float (4 B)");
    if (Size() > 1)
      TRIBUTARY_EXPECT_ALL(Contains(msg,
                                    "object: AllReduce<double> 'x' (object 0) on rank 0, "
                                    "AllReduce<float> 'x' (object 0) on " +
                                        Others()) &&
                           (d ? d->val == 1.0 : f->val == 1.0f));
  }
  {
    std::unique_ptr<tributary::Reduce<int>> i;
    std::unique_ptr<tributary::Reduce<float>> f;
    if (Rank() == 0) {
      i = std::make_unique<tributary::Reduce<int>>(ctx, "y");
      i->StartReduce(0, tributary::Max{});
    } else {
      f = std::make_unique<tributary::Reduce<float>>(ctx, "y");
      f->StartReduce(0, tributary::Max{});
    }
    ExpectNamed([&] { return i ? i->CheckReduce() : f->CheckReduce(); }, "element type",
                "int32 (4 B)", "float (4 B)");
  }
}

TEST_P(Agreement, CountsDiffer) {
  tributary::Context ctx(Full());
  {
    std::unique_ptr<tributary::AllReduce<std::array<double, 2>>> two;
    std::unique_ptr<tributary::AllReduce<std::array<double, 3>>> three;
    if (Rank() == 0) {
      two = std::make_unique<tributary::AllReduce<std::array<double, 2>>>(ctx, "v");
      two->StartReduce(tributary::Sum{});
    } else {
      three = std::make_unique<tributary::AllReduce<std::array<double, 3>>>(ctx, "v");
      three->StartReduce(tributary::Sum{});
    }
    ExpectNamed([&] { return two ? two->CheckReduce() : three->CheckReduce(); }, "count",
                "2 elements", "3 elements");
  }
  // Variable lengths: the length check of every level names them.
  tributary::AllReduce<std::vector<double>> v(ctx, "norms");
  v.val.assign(Rank() == 0 ? 2 : 4, 1.0);
  v.StartReduce(tributary::Sum{});
  const std::string msg = Outcome([&] { return v.CheckReduce(); });
  if (Size() > 1)
    TRIBUTARY_EXPECT_ALL(Contains(msg, "lengths differ across ranks") &&
                         Contains(msg, "between 2 and 4"));
  else
    TRIBUTARY_EXPECT_ALL(msg.empty());
  // Lengths and the operator at once: both named.
  v.val.assign(Rank() == 0 ? 2 : 4, 1.0);
  if (Rank() == 0)
    v.StartReduce(tributary::Sum{});
  else
    v.StartReduce(tributary::Min{});
  const std::string both = ExpectNamed([&] { return v.CheckReduce(); }, "operator", "Sum", "Min");
  if (Size() > 1)
    TRIBUTARY_EXPECT_ALL(Contains(both, "count: 2 elements on rank 0, 4 elements on " + Others()));
}

TEST_P(Agreement, CollectivesDiffer) {
  tributary::Context ctx(Full());
  std::unique_ptr<tributary::AllReduce<double>> all;
  std::unique_ptr<tributary::Reduce<double>> one;
  if (Rank() == 0) {
    all = std::make_unique<tributary::AllReduce<double>>(ctx, "c");
    all->StartReduce(tributary::Sum{});
  } else {
    one = std::make_unique<tributary::Reduce<double>>(ctx, "c");
    one->StartReduce(0, tributary::Sum{});
  }
  ExpectNamed([&] { return all ? all->CheckReduce() : one->CheckReduce(); }, "collective",
              "allreduce", "reduce");
  all.reset();
  one.reset();
  std::unique_ptr<tributary::AllGather<int>> gather;
  std::unique_ptr<tributary::AllReduce<int>> sum;
  if (Rank() == 0) {
    gather = std::make_unique<tributary::AllGather<int>>(ctx, "g");
    gather->StartReduce();
  } else {
    sum = std::make_unique<tributary::AllReduce<int>>(ctx, "g");
    sum->StartReduce(tributary::Sum{});
  }
  ExpectNamed([&] { return gather ? gather->CheckReduce() : sum->CheckReduce(); }, "collective",
              "allgather", "allreduce");
}

TEST_P(Agreement, RootsDiffer) {
  if (Size() < 2) GTEST_SKIP() << "a second root needs two ranks";
  tributary::Context ctx(Full());
  tributary::Reduce<double> r(ctx, "rooted");
  r.val = 5.0;
  r.StartReduce(Rank() == 0 ? 0 : 1, tributary::Sum{});
  ExpectNamed([&] { return r.CheckReduce(); }, "root", "0", "1");
  TRIBUTARY_EXPECT_ALL(r.val == 5.0);
  // A user operator (a packed Reduce runs as an allreduce) and a plain MPI_Op too.
  r.StartReduce(Rank() == 0 ? 1 : 0, Plus{});
  ExpectNamed([&] { return r.CheckReduce(); }, "root", "1", "0");
  tributary::Reduce<int> m(ctx, "rooted mpi");
  m.StartReduce(Rank() == 0 ? 0 : Size() - 1, MPI_SUM);
  ExpectNamed([&] { return m.CheckReduce(); }, "root", "0", std::to_string(Size() - 1));
}

TEST_P(Agreement, DeterminismModesDiffer) {
  tributary::Context ctx(Full());
  tributary::AllReduce<double> a(ctx, "mass");
  a.SetDeterminism(Rank() == 0 ? tributary::Determinism::fast
                               : tributary::Determinism::rank_count_independent);
  a.val = 0.1;
  a.StartReduce(tributary::Sum{});
  ExpectNamed([&] { return a.CheckReduce(); }, "determinism", "fast", "rank_count_independent");
  tributary::Reduce<double> r(ctx, "mass reduce");
  r.SetDeterminism(Rank() == 0 ? tributary::Determinism::rank_count_independent
                               : tributary::Determinism::fast);
  r.StartReduce(0, tributary::Sum{});
  ExpectNamed([&] { return r.CheckReduce(); }, "determinism", "rank_count_independent", "fast");
}

TEST_P(Agreement, ObjectsDifferInNameOrType) {
  tributary::Context ctx(Full());
  {
    tributary::AllReduce<double> a(ctx, Rank() == 0 ? "dt" : "mass");
    a.StartReduce(tributary::Min{});
    ExpectNamed([&] { return a.CheckReduce(); }, "object", "AllReduce<double> 'dt' (object 0)",
                "AllReduce<double> 'mass' (object 0)");
  }
  std::unique_ptr<tributary::AllReduce<double>> a;
  std::unique_ptr<tributary::Batch> b;
  if (Rank() == 0) {
    a = std::make_unique<tributary::AllReduce<double>>(ctx, "step");
    a->StartReduce(tributary::Sum{});
  } else {
    b = std::make_unique<tributary::Batch>(ctx, "step");
    b->Add<double>(tributary::Sum{}, "dt");
    b->StartReduce();
  }
  ExpectNamed([&] { return a ? a->CheckReduce() : b->CheckReduce(); }, "object",
              "AllReduce<double> 'step' (object 1)", "Batch 'step' (object 1)");
}

TEST_P(Agreement, BatchMembersDiffer) {
  tributary::Context ctx(Full());
  {  // a member's operator
    tributary::Batch b(ctx, "step");
    auto& dt = b.Add<double>(tributary::Min{}, "dt");
    if (Rank() == 0)
      b.Add<double>(tributary::Sum{}, "mass");
    else
      b.Add<double>(tributary::Max{}, "mass");
    dt.val = 1.0;
    b.StartReduce();
    ExpectNamed([&] { return b.CheckReduce(); }, "operator", "dt: Min, mass: Sum",
                "dt: Min, mass: Max");
    TRIBUTARY_EXPECT_ALL(dt.val == 1.0);
  }
  {  // a member's user operator, and a plain MPI_Op
    tributary::Batch b(ctx, "user");
    if (Rank() == 0)
      b.Add<double>(Plus{}, "p");
    else
      b.Add<double>(Times{}, "p");
    b.Add<int>(Rank() == 0 ? MPI_MAX : MPI_MIN, "q");
    b.StartReduce();
    ExpectNamed([&] { return b.CheckReduce(); }, "operator",
                "p: (anonymous namespace)::Plus, q: MPI_MAX",
                "p: (anonymous namespace)::Times, q: MPI_MIN");
  }
  {  // a member's element type
    tributary::Batch b(ctx, "types");
    if (Rank() == 0)
      b.Add<double>(tributary::Sum{}, "m");
    else
      b.Add<float>(tributary::Sum{}, "m");
    b.StartReduce();
    ExpectNamed([&] { return b.CheckReduce(); }, "element type", "m: double (8 B)",
                "m: float (4 B)");
  }
  {  // the number of members
    tributary::Batch b(ctx, "count");
    b.Add<double>(tributary::Sum{}, "a");
    if (Rank() != 0) b.Add<double>(tributary::Sum{}, "b");
    b.StartReduce();
    ExpectNamed([&] { return b.CheckReduce(); }, "count", "1 element", "2 elements");
  }
}

TEST_P(Agreement, BatchDeterminismDiffers) {
  tributary::ContextOptions o = Full();
  if (Rank() == 0) o.determinism = tributary::Determinism::rank_count_independent;
  tributary::Context ctx(o);
  tributary::Batch b(ctx, "exact");
  auto& m = b.Add<double>(tributary::Sum{}, "mass");
  b.Add<int>(tributary::Max{}, "cells");
  m.val = 0.5;
  b.StartReduce();
  ExpectNamed([&] { return b.CheckReduce(); }, "determinism", "rank_count_independent", "fast");
}

std::string ScheduleName(const ::testing::TestParamInfo<bool>& param) {
  return param.param ? "MpiLibrary" : "Own";
}

INSTANTIATE_TEST_SUITE_P(Schedules, Agreement, ::testing::Values(false, true), ScheduleName);

// At the default level (DebugLevel::basic) the record rides on rounds sent anyway: the
// length round of variable-size values names the disagreement; the header of a packed
// message (user operators, batches) reports it on every rank.
class AgreementBasic : public Agreement {};

TEST_P(AgreementBasic, RidesOnTheLengthRound) {
  tributary::Context ctx(Options(DebugLevel::basic, Library()));
  tributary::AllReduce<std::vector<double>> v(ctx, "profile");
  v.val.assign(3, 1.0);
  if (Rank() == 0)
    v.StartReduce(tributary::Max{});
  else
    v.StartReduce(tributary::Sum{});
  const std::string msg = ExpectNamed([&] { return v.CheckReduce(); }, "operator", "Max", "Sum");
  if (Size() > 1) TRIBUTARY_EXPECT_ALL(Contains(msg, "found at DebugLevel::basic"));
}

TEST_P(AgreementBasic, PackedMessagesCarryTheRecord) {
  tributary::Context ctx(Options(DebugLevel::basic, Library()));
  tributary::AllReduce<double> a(ctx, "user");
  a.val = 3.0;
  if (Rank() == 0)
    a.StartReduce(Plus{});
  else
    a.StartReduce(Times{});
  std::string msg = Outcome([&] { return a.CheckReduce(); });
  const std::string expect = "started this generation differently";
  if (Size() > 1)
    TRIBUTARY_EXPECT_ALL(Contains(msg, expect) && Contains(msg, "DebugLevel::full names which") &&
                         a.val == 3.0);
  else
    TRIBUTARY_EXPECT_ALL(msg.empty() && a.val == 3.0);
  tributary::Batch b(ctx, "step");
  auto& dt = b.Add<double>(tributary::Min{}, "dt");
  b.Add<double>(Rank() == 0 ? MPI_SUM : MPI_MAX, "mass");
  dt.val = 2.0;
  b.StartReduce();
  msg = Outcome([&] { return b.CheckReduce(); });
  if (Size() > 1)
    TRIBUTARY_EXPECT_ALL(Contains(msg, expect) && dt.val == 2.0);
  else
    TRIBUTARY_EXPECT_ALL(msg.empty());
  // Agreeing again, both complete.
  a.val = 1.0;
  a.StartReduce(Plus{});
  dt.val = 1.0;
  b.StartReduce();
  TRIBUTARY_EXPECT_ALL(Outcome([&] { return a.CheckReduce(); }).empty() && a.val == Size());
  const std::string batch = Outcome([&] { return b.CheckReduce(); });
  if (Size() > 1)
    TRIBUTARY_EXPECT_ALL(Contains(batch, expect));  // the members' operators still differ
}

// Keyed reductions compare every declaration at every level (each message carries the
// declaration's hash): the operator, plain MPI_Ops included, and the count.
std::string KeyedOutcome(tributary::KeyedReduction<std::int64_t>& r, std::uint64_t key) {
  try {
    while (r.Check(key) != TaskStatus::complete) {
    }
  } catch (const tributary::Error& e) {
    return e.what();
  }
  return "";
}

TEST(KeyedAgreement, OperatorsAndCountsDiffer) {
  tributary::Context ctx;
  tributary::KeyedReduction<std::int64_t> r(ctx, "keyed");
  tributary::KeyOptions o;
  o.count = Size();
  o.local = 1;
  const auto expect_failed = [&](std::uint64_t key) {
    const std::string msg = KeyedOutcome(r, key);
    if (Size() == 1) {
      TRIBUTARY_EXPECT_ALL(msg.empty());
    } else {
      TRIBUTARY_EXPECT_ALL(Contains(msg, "'keyed' key " + std::to_string(key) + ", generation 1") &&
                           Contains(msg, "declared the key differently"));
    }
    tributary::testing::Barrier();
  };
  if (Rank() == 0)
    r.Declare(1, tributary::Sum{}, o);
  else
    r.Declare(1, tributary::Max{}, o);
  r.Contribute(1, Rank(), 1);
  expect_failed(1);
  r.Declare(2, Rank() == 0 ? MPI_SUM : MPI_MAX, o);
  r.Contribute(2, Rank(), 1);
  expect_failed(2);
  if (Size() == 1) return;  // a count of 2 would wait for a contribution nobody makes
  tributary::KeyOptions more = o;
  if (Rank() == 0) more.count = Size() + 1;
  r.Declare(3, tributary::Sum{}, more);
  r.Contribute(3, Rank(), 1);
  expect_failed(3);
}

INSTANTIATE_TEST_SUITE_P(Schedules, AgreementBasic, ::testing::Values(false, true), ScheduleName);

}  // namespace
