// Tributary's own schedules through the public API: every schedule x operator x count x
// rank count equals a serial reference and gives every rank the same bits; non-commutative
// operators keep rank order; several schedules are in flight at once in different orders.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "test_types.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::ScheduleKind;
using tributary::TaskStatus;
using tributary::testing::Mat;
using tributary::testing::MatMul;
using tributary::testing::Rank;
using tributary::testing::Size;

template <class R>
void Wait(R& r) {
  while (r.CheckReduce() != TaskStatus::complete) {
  }
}

template <class T>
bool SameBitsEverywhere(const std::vector<T>& v) {
  std::string bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  auto all = tributary::testing::AllGatherBytes(bytes);
  return std::all_of(all.begin(), all.end(), [&](const std::string& b) { return b == all[0]; });
}

tributary::ContextOptions With(ScheduleKind allreduce, ScheduleKind reduce = ScheduleKind::binomial) {
  tributary::ContextOptions o;
  o.allreduce_schedule = allreduce;
  o.reduce_schedule = reduce;
  o.allgather_schedule = ScheduleKind::ring;
  return o;
}

class AllreduceSchedules : public ::testing::TestWithParam<ScheduleKind> {};
INSTANTIATE_TEST_SUITE_P(Own, AllreduceSchedules,
                         ::testing::Values(ScheduleKind::binomial, ScheduleKind::reduce_bcast,
                                           ScheduleKind::recursive_doubling, ScheduleKind::ring),
                         [](const auto& param_info) {
                           return std::string(tributary::ToString(param_info.param));
                         });

const std::size_t kCounts[] = {0, 1, 2, 7, 31, 33, 1000, (1u << 16) + 1};

TEST_P(AllreduceSchedules, IntegerSumsAreExactForEveryCount) {
  tributary::Context ctx(With(GetParam()));
  tributary::AllReduce<std::vector<long>> r(ctx, "ints");
  for (std::size_t n : kCounts) {
    r.val.resize(n);
    for (std::size_t i = 0; i < n; ++i) r.val[i] = static_cast<long>(i) * (Rank() + 1) - Rank();
    r.StartReduce(tributary::Sum{});
    Wait(r);
    const long p = Size(), tri = p * (p + 1) / 2, ranks = p * (p - 1) / 2;
    bool ok = r.val.size() == n;
    for (std::size_t i = 0; ok && i < n; ++i) ok = r.val[i] == static_cast<long>(i) * tri - ranks;
    TRIBUTARY_EXPECT_ALL(ok);
  }
}

TEST_P(AllreduceSchedules, FloatSumsAgreeBitwiseOnEveryRank) {
  tributary::Context ctx(With(GetParam()));
  tributary::AllReduce<std::vector<double>> r(ctx, "doubles");
  for (std::size_t n : {std::size_t(1), std::size_t(33), std::size_t(1) << 20}) {
    r.val.resize(n);
    for (std::size_t i = 0; i < n; ++i)
      r.val[i] = (i % 3 ? 1e16 : 1.0) * ((Rank() + static_cast<int>(i)) % 2 ? 1 : -1) + 0.1 * Rank();
    std::vector<double> mine = r.val;
    r.StartReduce(tributary::Sum{});
    Wait(r);
    TRIBUTARY_EXPECT_ALL(SameBitsEverywhere(r.val));
    // Close to the serial sum (the float result depends on the combine order).
    std::vector<double> serial(n, 0.0);
    for (int q = 0; q < Size(); ++q)
      for (std::size_t i = 0; i < n; ++i)
        serial[i] += (i % 3 ? 1e16 : 1.0) * ((q + static_cast<int>(i)) % 2 ? 1 : -1) + 0.1 * q;
    bool ok = true;
    for (std::size_t i = 0; ok && i < n; ++i) ok = std::abs(r.val[i] - serial[i]) <= 8.0 * Size();
    TRIBUTARY_EXPECT_ALL(ok);
  }
}

TEST_P(AllreduceSchedules, NonCommutativeOperatorsKeepRankOrderOrAreRefused) {
  tributary::Context ctx(With(GetParam()));
  tributary::AllReduce<std::vector<Mat>> r(ctx, "matrices");
  Mat expect = MatMul::identity();
  for (int q = 0; q < Size(); ++q) {
    Mat m = q % 2 ? Mat{1, q + 1, 0, 1} : Mat{1, 0, q + 2, 1};
    MatMul{}(expect, m);
    expect = m;
  }
  const Mat mine = Rank() % 2 ? Mat{1, Rank() + 1, 0, 1} : Mat{1, 0, Rank() + 2, 1};
  r.val.assign(5, mine);
  std::string error;
  try {
    r.StartReduce(MatMul{});
    Wait(r);
  } catch (const tributary::UsageError& e) {
    error = e.what();
  }
  if (tributary::IsOrderKeeping(GetParam()) || Size() == 1) {
    TRIBUTARY_EXPECT_ALL(error.empty() && r.val.size() == 5u &&
                         std::all_of(r.val.begin(), r.val.end(), [&](const Mat& m) { return m == expect; }));
  } else {
    TRIBUTARY_EXPECT_ALL(error.find("does not keep rank order") != std::string::npos);
  }
}

TEST_P(AllreduceSchedules, RegionalBatchAndMinLocTravelPacked) {
  tributary::Context ctx(With(GetParam()));
  tributary::Batch step(ctx, "step");
  auto& dt = step.Add<double>(tributary::Min{});
  auto& where = step.Add<tributary::ValueLoc<double>>(tributary::MinLoc{});
  const int lists = Rank() % 2 ? 0 : 3;
  step.Expect(lists);
  for (int i = 0; i < lists; ++i) {
    dt.Contribute(i, 1.0 + Rank() + i);
    where.Contribute(i, {2.0, Rank() * 10 + i});
  }
  Wait(step);
  TRIBUTARY_EXPECT_ALL(dt.val == 1.0 && where.val.value == 2.0 && where.val.index == 0);
}

TEST(Schedules, BinomialReduceToEveryRootKeepsOrderAndOtherRanksValues) {
  tributary::Context ctx(With(ScheduleKind::ring, ScheduleKind::binomial));
  for (int root = 0; root < Size(); ++root) {
    tributary::Reduce<std::vector<int>> r(ctx, "to root");
    r.val = {Rank() + 1, 1, -Rank()};
    r.StartReduce(root, tributary::Sum{});
    Wait(r);
    const int p = Size();
    if (Rank() == root)
      TRIBUTARY_EXPECT_ALL((r.val == std::vector<int>{p * (p + 1) / 2, p, -p * (p - 1) / 2}));
    else
      TRIBUTARY_EXPECT_ALL((r.val == std::vector<int>{Rank() + 1, 1, -Rank()}));
  }
}

TEST(Schedules, RingAllGatherInRankOrder) {
  tributary::Context ctx(With(ScheduleKind::ring));
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(17)}) {
    tributary::AllGather<std::vector<int>> g(ctx);
    g.local.assign(n, Rank());
    g.StartReduce();
    Wait(g);
    bool ok = static_cast<int>(g.val.size()) == Size();
    for (int q = 0; ok && q < Size(); ++q) ok = g.val[static_cast<std::size_t>(q)] == std::vector<int>(n, q);
    TRIBUTARY_EXPECT_ALL(ok);
  }
}

TEST(Schedules, ManyInFlightWithDifferentStartOrdersNeverMixMessages) {
  tributary::Context ctx(With(ScheduleKind::recursive_doubling, ScheduleKind::binomial));
  std::vector<tributary::AllReduce<std::vector<long>>> objects;
  for (int k = 0; k < 6; ++k) objects.emplace_back(ctx, "o" + std::to_string(k));
  std::mt19937 rng(99u + static_cast<unsigned>(Rank()));
  bool ok = true;
  for (int gen = 0; gen < 30; ++gen) {
    std::vector<int> order(objects.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (int k : order) {
      objects[static_cast<std::size_t>(k)].val.assign(static_cast<std::size_t>(k * 100 + 1),
                                                      static_cast<long>(k + gen));
      objects[static_cast<std::size_t>(k)].StartReduce(tributary::Sum{});
    }
    std::shuffle(order.begin(), order.end(), rng);
    // Own schedules move only when polled: waiting on one object while the other rank waits
    // on another needs the Context's progress (what an executor's progress hook does).
    for (int k : order)
      while (objects[static_cast<std::size_t>(k)].CheckReduce() != TaskStatus::complete)
        ctx.Progress();
    for (std::size_t k = 0; k < objects.size(); ++k)
      ok = ok && objects[k].val.back() == static_cast<long>(k + static_cast<std::size_t>(gen)) * Size();
  }
  TRIBUTARY_EXPECT_ALL(ok);
}

TEST(Schedules, SchedulesNotAvailableOrNotApplicableAreClearErrors) {
  {
    tributary::Context ctx(With(ScheduleKind::rabenseifner));
    tributary::AllReduce<double> r(ctx);
    r.val = 1.0;
    std::string error;
    try {
      r.StartReduce(tributary::Sum{});
      Wait(r);
    } catch (const tributary::UsageError& e) {
      error = e.what();
    }
    if (Size() > 1) TRIBUTARY_EXPECT_ALL(error.find("'rabenseifner' is not available") != std::string::npos);
  }
  {
    tributary::ContextOptions o = With(ScheduleKind::ring);
    o.reduce_schedule = ScheduleKind::ring;  // ring does not implement reduce
    tributary::Context ctx(o);
    tributary::Reduce<double> r(ctx);
    r.val = 1.0;
    std::string error;
    try {
      r.StartReduce(0, tributary::Sum{});
      Wait(r);
    } catch (const tributary::UsageError& e) {
      error = e.what();
    }
    if (Size() > 1) TRIBUTARY_EXPECT_ALL(error.find("'ring' does not implement") != std::string::npos);
  }
}

}  // namespace
