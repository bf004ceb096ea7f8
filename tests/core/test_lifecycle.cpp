// The state machine of reduction objects and the clear errors of misuse, at every rank
// count: check before start, second start in flight, contributions out of range or
// repeated, lengths that differ across ranks, user operators that throw, reuse over many
// generations, moves.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "reduction_test.hpp"
#include "test_types.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::Phase;
using tributary::TaskStatus;
using tributary::UsageError;
using tributary::testing::MessageOf;
using tributary::testing::Rank;
using tributary::testing::Size;
using tributary::testing::Wait;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Lifecycle, CheckBeforeStartIsAnErrorNotComplete) {
  tributary::Context ctx;
  tributary::AllReduce<double> r(ctx, "dt");
  EXPECT_EQ(r.State(), Phase::idle);
  const std::string msg = MessageOf<UsageError>([&] { r.CheckReduce(); });
  TRIBUTARY_EXPECT_ALL(Contains(msg, "before any StartReduce") && Contains(msg, "'dt'") &&
                       Contains(msg, "rank " + std::to_string(Rank())) &&
                       Contains(msg, "generation 0"));
}

TEST(Lifecycle, SecondStartWhileNotDoneIsAnError) {
  tributary::Context ctx;
  tributary::AllReduce<int> r(ctx, "count");
  r.val = 1;
  r.StartReduce(tributary::Sum{});
  const std::string msg = MessageOf<UsageError>([&] { r.StartReduce(tributary::Sum{}); });
  TRIBUTARY_EXPECT_ALL(Contains(msg, "started again") && Contains(msg, "generation 1"));
  Wait(r);
  TRIBUTARY_EXPECT_ALL(r.val == Size());
  // Collecting counts as not done too.
  r.Expect(2, tributary::Sum{});
  const std::string msg2 = MessageOf<UsageError>([&] { r.Expect(2, tributary::Sum{}); });
  TRIBUTARY_EXPECT_ALL(Contains(msg2, "collecting"));
  r.Contribute(0, 1);
  r.Contribute(1, 2);
  Wait(r);
  TRIBUTARY_EXPECT_ALL(r.val == 3 * Size());
}

// Moving an object whose network phase is in flight is refused before anything moves: the
// object stays whole, completes and holds the right result.
TEST(Lifecycle, MoveInFlightIsRefusedAndLeavesTheObjectWhole) {
  tributary::Context ctx;
  tributary::AllReduce<double> r(ctx, "moved");
  r.val = 1.0;
  r.StartReduce(tributary::Sum{});
  const std::string msg =
      MessageOf<UsageError>([&] { tributary::AllReduce<double> other(std::move(r)); });
  Wait(r);
  TRIBUTARY_EXPECT_ALL(Contains(msg, "moved while its network phase is in flight"));
  TRIBUTARY_EXPECT_ALL(r.val == 1.0 * Size());
  tributary::AllGather<int> g(ctx, "gathered");
  g.local = Rank();
  g.StartReduce();
  const std::string gmsg =
      MessageOf<UsageError>([&] { tributary::AllGather<int> other(std::move(g)); });
  Wait(g);
  bool ok = static_cast<int>(g.val.size()) == Size();
  for (int q = 0; ok && q < Size(); ++q) ok = g.val[static_cast<std::size_t>(q)] == q;
  TRIBUTARY_EXPECT_ALL(Contains(gmsg, "moved while its network phase is in flight"));
  TRIBUTARY_EXPECT_ALL(ok);
}

TEST(Lifecycle, ContributionOutOfRangeOrTwiceIsAnError) {
  tributary::Context ctx;
  tributary::AllReduce<int> r(ctx, "n");
  r.Expect(3, tributary::Max{});
  const std::string out = MessageOf<UsageError>([&] { r.Contribute(3, 5); });
  const std::string neg = MessageOf<UsageError>([&] { r.Contribute(-1, 5); });
  r.Contribute(1, 5);
  const std::string twice = MessageOf<UsageError>([&] { r.Contribute(1, 6); });
  TRIBUTARY_EXPECT_ALL(Contains(out, "list index 3 is out of range") && Contains(out, "0..2"));
  TRIBUTARY_EXPECT_ALL(Contains(neg, "list index -1"));
  TRIBUTARY_EXPECT_ALL(Contains(twice, "list 1 contributed twice"));
  r.Contribute(0, 1);
  r.Contribute(2, 9);
  Wait(r);
  TRIBUTARY_EXPECT_ALL(r.val == 9);
  const std::string late = MessageOf<UsageError>([&] { r.Contribute(0, 1); });
  TRIBUTARY_EXPECT_ALL(Contains(late, "contributed while the object is done"));
}

// 2x2 integer matrices: their product does not commute, so it shows the combine order.
using tributary::testing::Mat;
using tributary::testing::MatMul;
Mat ListMatrix(int rank, int list) {
  const long k = 3 * rank + list + 1;
  return list % 2 ? Mat{1, k, 0, 1} : Mat{1, 0, k, 1};
}

TEST(Lifecycle, RegionalCombineIsInListOrderWhateverTheArrivalOrder) {
  tributary::Context ctx;
  Mat expect = MatMul::identity();
  for (int q = 0; q < Size(); ++q)
    for (int i = 0; i < 3; ++i) {
      Mat m = ListMatrix(q, i);
      MatMul{}(expect, m);
      expect = m;
    }
  tributary::AllReduce<Mat> r(ctx);
  const int orders[3][3] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}};
  for (int k = 0; k < 3; ++k) {
    r.Expect(3, MatMul{});
    const auto& order = orders[(k + Rank()) % 3];  // a different arrival order on each rank
    for (int i : order) r.Contribute(i, ListMatrix(Rank(), i));
    Wait(r);
    TRIBUTARY_EXPECT_ALL(r.val == expect);
  }
}

TEST(Lifecycle, ZeroContributionsUseTheNeutralElement) {
  tributary::Context ctx;
  tributary::AllReduce<double> mn(ctx);
  tributary::AllReduce<std::vector<long>> sum(ctx);
  // Odd ranks have no lists at all.
  const int lists = Rank() % 2 ? 0 : 2;
  mn.Expect(lists, tributary::Min{});
  sum.val.assign(3, -1);  // the length a rank without lists reduces with
  sum.Expect(lists, tributary::Sum{});
  for (int i = 0; i < lists; ++i) {
    mn.Contribute(i, 5.0 + Rank() + i);
    sum.Contribute(i, std::vector<long>{1, 2, 3});
  }
  Wait(mn);
  Wait(sum);
  const long even = (Size() + 1) / 2;
  TRIBUTARY_EXPECT_ALL(mn.val == 5.0);
  TRIBUTARY_EXPECT_ALL((sum.val == std::vector<long>{2 * even, 4 * even, 6 * even}));
}

TEST(Lifecycle, ContributionCountMayChangeEveryGeneration) {
  tributary::Context ctx;
  tributary::AllReduce<long> r(ctx);
  for (int g = 0; g < 20; ++g) {
    const int lists = (g + Rank()) % 4;  // 0..3, different on every rank (AMR)
    r.Expect(lists, tributary::Sum{});
    for (int i = lists - 1; i >= 0; --i) r.Contribute(i, 1);
    Wait(r);
    long expect = 0;
    for (int q = 0; q < Size(); ++q) expect += (g + q) % 4;
    TRIBUTARY_EXPECT_ALL(r.val == expect);
  }
  EXPECT_EQ(r.Generation(), 20u);
}

TEST(Lifecycle, VectorsOfDifferentLengthsAcrossRanksFailOnEveryRank) {
  tributary::Context ctx;
  tributary::AllReduce<std::vector<double>> v(ctx, "norms");
  v.val.assign(static_cast<std::size_t>(3 + Rank()), 1.0);
  v.StartReduce(tributary::Sum{});
  const std::string msg = MessageOf<UsageError>([&] { Wait(v); });
  if (Size() > 1) {
    TRIBUTARY_EXPECT_ALL(Contains(msg, "lengths differ across ranks") && Contains(msg, "'norms'") &&
                         Contains(msg, "between 3 and " + std::to_string(2 + Size())));
    EXPECT_EQ(v.State(), Phase::failed);
  } else {
    TRIBUTARY_EXPECT_ALL(msg.empty() && v.val.size() == 3u);
  }
  // The object is usable again.
  v.val.assign(2, 1.0);
  v.StartReduce(tributary::Sum{});
  Wait(v);
  TRIBUTARY_EXPECT_ALL((v.val == std::vector<double>{1.0 * Size(), 1.0 * Size()}));
}

TEST(Lifecycle, FullDebugLevelCatchesDifferentOperatorsAcrossRanks) {
  tributary::ContextOptions options;
  options.debug = tributary::DebugLevel::full;
  tributary::Context ctx(options);
  tributary::AllReduce<double> r(ctx, "mixed");
  r.val = 1.0;
  if (Rank() == 0)
    r.StartReduce(tributary::Sum{});
  else
    r.StartReduce(tributary::Max{});
  const std::string msg = MessageOf<UsageError>([&] { Wait(r); });
  if (Size() > 1)
    TRIBUTARY_EXPECT_ALL(Contains(msg, "started this generation differently") &&
                         Contains(msg, "operator: Sum on rank 0, Max on rank"));
  else
    TRIBUTARY_EXPECT_ALL(msg.empty() && r.val == 1.0);
  r.val = 2.0;
  r.StartReduce(tributary::Sum{});
  Wait(r);
  TRIBUTARY_EXPECT_ALL(r.val == 2.0 * Size());
}

TEST(Lifecycle, ListsContributingDifferentLengthsIsAnError) {
  tributary::Context ctx;
  tributary::AllReduce<std::vector<int>> v(ctx);
  v.Expect(2, tributary::Sum{});
  v.Contribute(0, {1, 2});
  const std::string msg = MessageOf<UsageError>([&] { v.Contribute(1, {1, 2, 3}); });
  TRIBUTARY_EXPECT_ALL(Contains(msg, "different lengths"));
}

TEST(Lifecycle, UserOperatorThatThrowsFailsOnEveryRankNamingTheRank) {
  tributary::Context ctx;
  // The value 666 poisons every combine it takes part in; only the last rank contributes it.
  auto picky = tributary::MakeOp<tributary::Commutes::yes>(
      [](const int& in, int& inout) {
        if (in == 666 || inout == 666) throw std::runtime_error("operator refuses 666");
        inout += in;
      },
      0);
  const int bad = Size() - 1;
  tributary::AllReduce<int> r(ctx, "picky");
  r.val = Rank() == bad ? 666 : 1;
  r.StartReduce(picky);
  std::string msg = MessageOf<tributary::RemoteError>([&] { Wait(r); });
  if (Size() > 1) {
    TRIBUTARY_EXPECT_ALL(Contains(msg, "threw on rank"));
  } else {
    TRIBUTARY_EXPECT_ALL(msg.empty());  // one rank: no combine happens at all
  }
  // In the regional combine the throwing rank is known exactly.
  r.Expect(2, picky);
  r.Contribute(0, 1);
  r.Contribute(1, Rank() == bad ? 666 : 2);
  msg = MessageOf<tributary::RemoteError>([&] { Wait(r); });
  TRIBUTARY_EXPECT_ALL(Contains(msg, "threw on rank " + std::to_string(bad)));
  if (Rank() == bad) {
    EXPECT_TRUE(Contains(msg, "operator refuses 666")) << msg;
  }
  // And the object works again afterwards.
  r.val = 1;
  r.StartReduce(picky);
  Wait(r);
  TRIBUTARY_EXPECT_ALL(r.val == Size());
}

TEST(Lifecycle, RootOutOfRangeIsAnError) {
  tributary::Context ctx;
  tributary::Reduce<double> r(ctx);
  const std::string msg = MessageOf<UsageError>([&] { r.StartReduce(Size(), tributary::Sum{}); });
  TRIBUTARY_EXPECT_ALL(Contains(msg, "root " + std::to_string(Size()) + " is not a rank"));
}

TEST(Lifecycle, ObjectsAreMovableWhenNotInFlight) {
  tributary::Context ctx;
  tributary::AllReduce<double> a(ctx, "moved");
  a.val = 1.0;
  a.StartReduce(tributary::Sum{});
  Wait(a);
  tributary::AllReduce<double> b(std::move(a));
  b.val = 2.0;
  b.StartReduce(tributary::Sum{});
  Wait(b);
  TRIBUTARY_EXPECT_ALL(b.val == 2.0 * Size() && b.Generation() == 2u);
  std::vector<tributary::AllReduce<int>> many;
  for (int i = 0; i < 4; ++i) many.emplace_back(ctx);
  for (auto& m : many) {
    m.val = 1;
    m.StartReduce(tributary::Sum{});
  }
  for (auto& m : many) Wait(m);
  bool ok = true;
  for (auto& m : many) ok = ok && m.val == Size();
  TRIBUTARY_EXPECT_ALL(ok);
}

// No ceiling of live objects: those beyond ContextOptions::communicator_pool run one of
// Tributary's schedules where the MPI library's is chosen (here forced), with the same result.
TEST(Lifecycle, ObjectsBeyondThePoolRunTributarysOwnSchedules) {
  tributary::ContextOptions options;
  options.communicator_pool = 2;
  options.allreduce_schedule = tributary::ScheduleKind::mpi_library;
  tributary::Context ctx(options);
  const int before = ctx.CommunicatorsCreated();
  tributary::AllReduce<int> a(ctx), b(ctx), c(ctx, "third");
  for (auto* r : {&a, &b, &c}) {
    r->val = 2;
    r->StartReduce(tributary::Sum{});
  }
  ctx.Wait(a, b, c);
  TRIBUTARY_EXPECT_ALL(a.val == 2 * Size() && b.val == 2 * Size() && c.val == 2 * Size());
  TRIBUTARY_EXPECT_ALL(a.ScheduleUsed() == tributary::ScheduleKind::mpi_library &&
                       b.ScheduleUsed() == tributary::ScheduleKind::mpi_library &&
                       c.ScheduleUsed() == tributary::ScheduleKind::recursive_doubling);
  TRIBUTARY_EXPECT_ALL(ctx.CommunicatorsCreated() == before);
}

// A Context may go before its objects (a framework's order of destruction): the network
// phases end with it (in flight: completed, every rank taking part), and the objects are
// inert afterwards, each call a UsageError naming the destroyed Context; nothing reported.
// On the MPI library's schedule too, whose small generations keep a persistent request
// between them (freed before the Context frees its communicators; one is in flight here),
// and a new Context afterwards reduces as before.
TEST(Lifecycle, ContextDestroyedBeforeItsObjectsLeavesThemInert) {
  for (const bool library : {false, true}) {
    std::vector<std::string> reported;
    tributary::ContextOptions options;
    options.error_handler = [&](const std::string& m) { reported.push_back(m); };
    if (library) options.allreduce_schedule = tributary::ScheduleKind::mpi_library;
    auto ctx = std::make_unique<tributary::Context>(options);
    auto idle = std::make_unique<tributary::AllReduce<int>>(*ctx, "survivor");
    auto done = std::make_unique<tributary::AllReduce<int>>(*ctx, "done");
    auto flying = std::make_unique<tributary::AllReduce<std::vector<double>>>(*ctx, "flying");
    auto small = std::make_unique<tributary::AllReduce<double>>(*ctx, "small");
    for (int i = 0; i < 3; ++i) {
      done->val = 1;
      done->StartReduce(tributary::Sum{});
      ctx->Wait(*done);
    }
    flying->val.assign(1000, 1.0);
    flying->StartReduce(tributary::Sum{});
    small->val = 2.0;
    small->StartReduce(tributary::Sum{});
    ctx.reset();
    TRIBUTARY_EXPECT_ALL(reported.empty());
    TRIBUTARY_EXPECT_ALL(!flying->InFlight() && flying->val.size() == 1000u);
    TRIBUTARY_EXPECT_ALL(!small->InFlight());
    TRIBUTARY_EXPECT_ALL(done->val == Size() && done->CheckReduce() == TaskStatus::complete);
    const std::string start = MessageOf<UsageError>([&] { idle->StartReduce(tributary::Sum{}); });
    TRIBUTARY_EXPECT_ALL(Contains(start, "'survivor'") &&
                         Contains(start, "Context has been destroyed"));
    const std::string expect = MessageOf<UsageError>([&] { done->Expect(1, tributary::Sum{}); });
    TRIBUTARY_EXPECT_ALL(Contains(expect, "Context has been destroyed"));
    idle.reset();  // inert: nothing reported, nothing freed twice
    done.reset();
    flying.reset();
    small.reset();
    TRIBUTARY_EXPECT_ALL(reported.empty());
    tributary::Context again(options);
    tributary::AllReduce<double> next(again, "next");
    for (int i = 0; i < 3; ++i) {
      next.val = i;
      next.StartReduce(tributary::Sum{});
      again.Wait(next);
      TRIBUTARY_EXPECT_ALL(next.val == i * Size());
    }
    TRIBUTARY_EXPECT_ALL(reported.empty());
  }
}

// A generation on the MPI library's schedule that another rank never starts, failed by that
// rank's report: MPI_Iallreduce and MPI_Ireduce above the persistent request's 4 KiB cannot
// be cancelled, so they are left pending with the buffers they use. Those are the
// message's (the length check's, under basic), or a vector's storage, which the object
// gives up for a copy of it, or, for a value stored inline and a reduce's separate input,
// a copy the schedule made at the start. The objects keep their values, and their teardown
// reports nothing and waits for nothing (without either each destructor waited the drain
// time, 10 s here, and then reported that the library may still use its buffers).
TEST(Lifecycle, AFailedLibraryCollectiveGivesUpTheBuffersItUses) {
  if (Size() < 2) GTEST_SKIP() << "needs a rank that never starts";
  using Fixed = std::array<double, 1000>;  // 8 KB, like the vectors
  for (const auto debug : {tributary::DebugLevel::basic, tributary::DebugLevel::none}) {
    std::vector<std::string> reported;
    tributary::ContextOptions options;
    options.debug = debug;
    options.watchdog = std::chrono::seconds(10);  // also the drain time
    options.on_failure = tributary::FailurePolicy::propagate;
    options.error_handler = [&](const std::string& m) { reported.push_back(m); };
    options.communicator_pool = 4;
    options.allreduce_schedule = tributary::ScheduleKind::mpi_library;
    options.reduce_schedule = tributary::ScheduleKind::mpi_library;
    auto ctx = std::make_unique<tributary::Context>(options);
    auto field = std::make_unique<tributary::AllReduce<std::vector<double>>>(*ctx, "field");
    auto profile = std::make_unique<tributary::Reduce<std::vector<double>>>(*ctx, "profile");
    auto inline_field = std::make_unique<tributary::AllReduce<Fixed>>(*ctx, "inline field");
    auto inline_profile = std::make_unique<tributary::Reduce<Fixed>>(*ctx, "inline profile");
    const bool starts = Rank() != Size() - 1;
    const std::size_t n = 1000;
    Fixed input;  // the caller's: a reduce's separate input
    input.fill(3.0 + Rank());
    if (starts) {
      field->val.assign(n, 1.0 + Rank());
      field->StartReduce(tributary::Sum{});
      profile->val.assign(n, 2.0 + Rank());
      profile->StartReduce(0, tributary::Sum{});
      inline_field->val.fill(4.0 + Rank());
      inline_field->StartReduce(tributary::Sum{});
      inline_profile->StartReduce(0, tributary::Sum{}, input);
    }
    tributary::testing::Barrier();
    if (!starts) ctx->ReportFailure("injected: this rank starts nothing");
    // Each object's generation fails on the ranks that started it, naming the failed rank;
    // a reduce's leaf may have sent its part before the failure (complete there). Later
    // polls settle it (a few, where MPI's tests answer "not yet"): the collective is left
    // pending, the network phase over, long before the drain time.
    const std::string failed = "rank " + std::to_string(Size() - 1) + " failed: injected";
    bool named = true, settled = true;
    auto fails = [&](auto& r, bool may_complete) {
      if (!starts) return;
      const std::string error = MessageOf<tributary::RemoteError>([&] { Wait(r); });
      if (may_complete && Rank() != 0 && r.State() == Phase::done) return;
      named = named && Contains(error, failed);
      for (int polls = 0; polls < 100000 && r.InFlight(); ++polls)
        (void)MessageOf<tributary::RemoteError>([&] { (void)r.CheckReduce(); });
      settled = settled && !r.InFlight();
    };
    fails(*field, false);
    fails(*profile, true);
    fails(*inline_field, false);
    fails(*inline_profile, true);
    TRIBUTARY_EXPECT_ALL(named);
    TRIBUTARY_EXPECT_ALL(settled);
    // Given up for a copy: the same length, and on a reduce's other ranks (which only send)
    // the same elements; the caller's input is untouched.
    TRIBUTARY_EXPECT_ALL(!starts || (field->val.size() == n && profile->val.size() == n));
    TRIBUTARY_EXPECT_ALL(!starts || Rank() == 0 ||
                         profile->val == std::vector<double>(n, 2.0 + Rank()));
    Fixed want;
    want.fill(3.0 + Rank());
    TRIBUTARY_EXPECT_ALL(input == want);
    field.reset();
    profile.reset();
    inline_field.reset();
    inline_profile.reset();
    ctx.reset();
    TRIBUTARY_EXPECT_ALL(reported.empty());
  }
}

// Keyed collectives and block patterns may outlive their Context too: their calls then throw
// a UsageError naming the destroyed Context (a completed key's result stays readable), and
// their destruction is quiet.
struct Tally {
  double value = 0;
};

TEST(Lifecycle, KeyedAndBlockPatternsOutliveTheirContext) {
  std::vector<std::string> reported;
  tributary::ContextOptions options;
  options.error_handler = [&](const std::string& m) { reported.push_back(m); };
  auto ctx = std::make_unique<tributary::Context>(options);
  auto keyed = std::make_unique<tributary::KeyedReduction<double>>(*ctx, "counts");
  const tributary::BlockGrid grid = tributary::BlockGrid::Regular(Size(), 1, Size());
  auto merge = std::make_unique<tributary::BlockReduction<Tally>>(
      *ctx, tributary::MergePartners(grid, {2}),
      [](Tally&, tributary::BlockProxy&, const tributary::BlockPartners&) {}, "merge");
  keyed->Declare(1, tributary::Sum{}, tributary::KeyOptions{Size(), 1, {0}, {}});
  keyed->Contribute(1, Rank(), 2.0);
  while (keyed->Check(1) != TaskStatus::complete) ctx->Progress();
  Tally mine;
  merge->Start({{grid.LocalBlocks(Rank()).front(), &mine}});
  while (merge->Run(0) != TaskStatus::complete) ctx->Progress();
  ctx->WaitAll();
  tributary::testing::Barrier();  // every rank's messages have left
  ctx.reset();
  TRIBUTARY_EXPECT_ALL(keyed->Check(1) == TaskStatus::complete);
  if (Rank() == 0) {
    EXPECT_EQ(keyed->Result(1), 2.0 * Size());
  }
  const std::string declare = MessageOf<UsageError>([&] {
    keyed->Declare(2, tributary::Sum{}, tributary::KeyOptions{Size(), 1, {0}, {}});
  });
  TRIBUTARY_EXPECT_ALL(Contains(declare, "'counts'") &&
                       Contains(declare, "Context has been destroyed"));
  const std::string start = MessageOf<UsageError>([&] {
    merge->Start({{grid.LocalBlocks(Rank()).front(), &mine}});
  });
  TRIBUTARY_EXPECT_ALL(Contains(start, "'merge'") && Contains(start, "Context has been destroyed"));
  keyed.reset();
  merge.reset();
  TRIBUTARY_EXPECT_ALL(reported.empty());
}

TEST(Lifecycle, LargeBatchesWithRunsOfTheSameOperator) {
  // 300 members (more than 255 arrivals per list), in runs of the same stateless operator
  // that combine as one segment, broken by a Max and by an operator with state.
  tributary::Context ctx;
  tributary::Batch big(ctx, "big");
  std::vector<tributary::BatchMember<double>*> sums;
  std::vector<tributary::BatchMember<int>*> maxes;
  for (int k = 0; k < 300; ++k) {
    if (k % 50 == 49)
      maxes.push_back(&big.Add<int>(tributary::Max{}, "max"));
    else
      sums.push_back(&big.Add<double>(tributary::Sum{}, "sum"));
  }
  const double scale = 0.5 + Rank();
  auto& scaled = big.Add<double>(
      tributary::MakeOp<tributary::Commutes::yes>(
          [scale](const double& in, double& inout) { inout = in + inout + 0 * scale; }, 0.0),
      "with state");
  for (int g = 0; g < 2; ++g) {
    const int lists = 1 + (Rank() + g) % 2;
    big.Expect(lists);
    for (int i = 0; i < lists; ++i) {
      for (std::size_t k = 0; k < sums.size(); ++k) sums[k]->Contribute(i, double(k) + Rank());
      for (std::size_t k = 0; k < maxes.size(); ++k)
        maxes[k]->Contribute(i, Rank() * 10 + i + int(k));
      scaled.Contribute(i, 1.0);
    }
    Wait(big);
    int total_lists = 0, max_ref = 0;
    double rank_sum = 0;
    for (int q = 0; q < Size(); ++q) {
      const int nl = 1 + (q + g) % 2;
      total_lists += nl;
      rank_sum += nl * q;
      max_ref = std::max(max_ref, q * 10 + nl - 1);
    }
    bool ok = scaled.val == total_lists;
    for (std::size_t k = 0; k < sums.size(); ++k)
      ok = ok && sums[k]->val == double(k) * total_lists + rank_sum;
    for (std::size_t k = 0; k < maxes.size(); ++k) ok = ok && maxes[k]->val == max_ref + int(k);
    TRIBUTARY_EXPECT_ALL(ok);
  }
}

TEST(Lifecycle, BatchOfMixedTypesAndOperatorsTravelsAsOne) {
  tributary::Context ctx;
  tributary::Batch step(ctx, "step");
  auto& dt = step.Add<double>(tributary::Min{}, "dt");
  auto& mass = step.Add<double>(tributary::Sum{}, "mass");
  auto& cells = step.Add<long>(tributary::Max{}, "cells");
  auto& where = step.Add<tributary::ValueLoc<float>>(tributary::MinLoc{}, "where");
  auto& flags = step.Add<std::array<std::uint8_t, 3>>(tributary::BOr{}, "flags");
  EXPECT_EQ(step.Size(), 5u);
  for (int g = 0; g < 3; ++g) {
    const int lists = (Rank() + g) % 3;  // some ranks have no lists
    step.Expect(lists);
    for (int i = lists - 1; i >= 0; --i) {
      dt.Contribute(i, 0.5 + Rank() + i);
      mass.Contribute(i, 1.25);
      cells.Contribute(i, 100L * Rank() + i);
      where.Contribute(i, {float(Rank() % 2), Rank() * 10 + i});
      flags.Contribute(i, {std::uint8_t(1 << i), 0, std::uint8_t(Rank())});
    }
    Wait(step);
    double dt_ref = tributary::Min::Identity<double>(), mass_ref = 0;
    long cells_ref = tributary::Max::Identity<long>();
    tributary::ValueLoc<float> where_ref =
        tributary::MinLoc::Identity<tributary::ValueLoc<float>>();
    std::uint8_t f0 = 0, f2 = 0;
    for (int q = 0; q < Size(); ++q) {
      const int nl = (q + g) % 3;
      for (int i = 0; i < nl; ++i) {
        dt_ref = std::min(dt_ref, 0.5 + q + i);
        mass_ref += 1.25;
        cells_ref = std::max(cells_ref, 100L * q + i);
        tributary::ValueLoc<float> w{float(q % 2), q * 10 + i};
        tributary::MinLoc{}(w, where_ref);
        f0 = std::uint8_t(f0 | (1 << i));
        f2 = std::uint8_t(f2 | q);
      }
    }
    TRIBUTARY_EXPECT_ALL(dt.val == dt_ref && mass.val == mass_ref && cells.val == cells_ref);
    TRIBUTARY_EXPECT_ALL(where.val == where_ref);
    TRIBUTARY_EXPECT_ALL(flags.val[0] == f0 && flags.val[1] == 0 && flags.val[2] == f2);
    EXPECT_EQ(dt.CheckReduce(), TaskStatus::complete);
  }
  // Hand-wired start of the same batch.
  dt.val = 1.0 + Rank();
  mass.val = 2.0;
  cells.val = Rank();
  where.val = {1.0f, Rank()};
  flags.val = {1, 2, 4};
  step.StartReduce();
  Wait(step);
  TRIBUTARY_EXPECT_ALL(dt.val == 1.0 && mass.val == 2.0 * Size() && cells.val == Size() - 1 &&
                       where.val.index == 0 && flags.val[2] == 4);
  const std::string twice = MessageOf<UsageError>([&] {
    step.Expect(1);
    dt.Contribute(0, 1.0);
    dt.Contribute(0, 1.0);
  });
  TRIBUTARY_EXPECT_ALL(Contains(twice, "member 'dt': list 0 contributed twice"));
  mass.Contribute(0, 1.0);
  cells.Contribute(0, 1);
  where.Contribute(0, {1.0f, 1});
  flags.Contribute(0, {0, 0, 0});
  Wait(step);
}

}  // namespace
