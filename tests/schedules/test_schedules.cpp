// Tributary's own schedules through the public API: every schedule x operator x type x
// count x rank count equals a serial reference and gives every rank the same bits;
// non-commutative operators keep rank order (or are refused by schedules that do not);
// several schedules are in flight at once in different orders; the node-aware form runs
// over virtual nodes (2 x 2 at 4 ranks, 2 + 1 at 3 ranks).
#include <gtest/gtest.h>
#if defined(__linux__)
#include <sched.h>
#endif

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "library_calls.hpp"
#include "mpi_test.hpp"
#include "reduction_test.hpp"
#include "test_types.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::ScheduleKind;
using tributary::TaskStatus;
using tributary::testing::Mat;
using tributary::testing::MatMul;
using tributary::testing::Perm;
using tributary::testing::PermCompose;
using tributary::testing::Rank;
using tributary::testing::Size;

using tributary::testing::Wait;

using tributary::testing::SameBitsEverywhere;

/// One configuration of the network phase.
struct Config {
  const char* name;
  ScheduleKind kind;
  int radix = 4;
  std::size_t segment_bytes = 65536;
  int ranks_per_node = 0;  // > 0: the node-aware form over virtual nodes of this size
};

tributary::ContextOptions Options(const Config& c, tributary::Collective which) {
  tributary::ContextOptions o;
  o.allreduce_schedule = ScheduleKind::recursive_doubling;
  o.reduce_schedule = ScheduleKind::binomial;
  o.allgather_schedule = ScheduleKind::ring;
  switch (which) {
    case tributary::Collective::allreduce:
      o.allreduce_schedule = c.kind;
      break;
    case tributary::Collective::reduce:
      o.reduce_schedule = c.kind;
      break;
    case tributary::Collective::allgather:
      o.allgather_schedule = c.kind;
      break;
  }
  o.schedule_params.radix = c.radix;
  o.schedule_params.segment_bytes = c.segment_bytes;
  o.schedule_params.node_aware = c.ranks_per_node > 0;
  o.ranks_per_node = c.ranks_per_node;
  return o;
}

std::string Name(const ::testing::TestParamInfo<Config>& info) { return info.param.name; }

// Counts: 0, 1, odd, 2^k ± 1, and one large (2^20 for the float test).
const std::size_t kCounts[] = {0, 1, 2, 7, 31, 33, 1000, (1u << 16) + 1};

/// Rank r's permutation for element i.
Perm PermOf(int r, std::size_t i) {
  return Perm::Of(static_cast<unsigned>(r * 7919 + 1) + static_cast<unsigned>(i % 13));
}

/// The serial reference: rank 0's · rank 1's · … for element i.
Perm PermProduct(std::size_t i) {
  Perm acc = PermOf(Size() - 1, i);
  for (int q = Size() - 2; q >= 0; --q) PermCompose{}(PermOf(q, i), acc);
  return acc;
}

// ---------------------------------------------------------------------------------------
// Exact sums (Determinism::rank_count_independent) travel as records of 1-4 or more 32-bit
// digits, with a word of flags only where some rank has a NaN or an infinity; the own
// schedules split them like values. Rank r's value of element i, in three data sets whose
// windows are short without flags (similar magnitudes), long (magnitudes 2^-1000 .. 2^1000),
// and short with flags (an infinity in one element on the last rank).
double ExactDataOf(int data_set, int r, std::size_t i) {
  const double k = static_cast<double>(i % 29) + 1.0;
  switch (data_set) {
    case 0:
      return 0.1 * k + 1e-3 * r;
    case 1:
      return std::ldexp(
          (r % 2 ? -1.0 : 1.0) * (0.3 + 0.01 * k),
          static_cast<int>((i * 37 + 11 * static_cast<std::size_t>(r)) % 2001) - 1000);
    default:
      if (i % 5 == 3 && r == Size() - 1) return -std::numeric_limits<double>::infinity();
      return 0.5 * k - 0.25 * r;
  }
}

// Every element equals the serial exact sum of the ranks' values, rounded once, on every
// rank that receives the result (all ranks for an allreduce, `root` for a reduce).
bool ExactRecordsCheck(tributary::Context& ctx, int root) {
  bool ok = true;
  tributary::AllReduce<std::vector<double>> all(ctx, "exact records");
  tributary::Reduce<std::vector<double>> one(ctx, "exact records to a root");
  for (int data_set = 0; data_set < 3; ++data_set) {
    for (std::size_t n :
         {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(33), std::size_t(1000)}) {
      std::vector<double> mine(n), expect(n);
      for (std::size_t i = 0; i < n; ++i) {
        mine[i] = ExactDataOf(data_set, Rank(), i);
        tributary::ExactSum s;
        for (int q = 0; q < Size(); ++q) s.Add(ExactDataOf(data_set, q, i));
        expect[i] = s.Round();
      }
      const auto same = [&](const std::vector<double>& got) {
        return got.size() == n && std::memcmp(got.data(), expect.data(), n * sizeof(double)) == 0;
      };
      if (root < 0) {
        all.val = mine;
        all.StartReduce(tributary::Sum{});
        Wait(ctx, all);
        ok = ok && same(all.val) && SameBitsEverywhere(all.val);
      } else {
        one.val = mine;
        one.StartReduce(root, tributary::Sum{});
        Wait(ctx, one);
        ok = ok && (Rank() == root ? same(one.val) : one.val == mine);
      }
    }
  }
  return ok;
}

// ---------------------------------------------------------------------------------------
// Allreduce

class Allreduce : public ::testing::TestWithParam<Config> {
 protected:
  tributary::ContextOptions Opts() const {
    return Options(GetParam(), tributary::Collective::allreduce);
  }
};

INSTANTIATE_TEST_SUITE_P(
    Own, Allreduce,
    ::testing::Values(
        Config{"binomial", ScheduleKind::binomial},
        Config{"reduce_bcast", ScheduleKind::reduce_bcast},
        Config{"knomial3", ScheduleKind::knomial, 3}, Config{"knomial4", ScheduleKind::knomial, 4},
        Config{"recursive_doubling", ScheduleKind::recursive_doubling},
        Config{"recursive_multiplying2", ScheduleKind::recursive_multiplying, 2},
        Config{"recursive_multiplying3", ScheduleKind::recursive_multiplying, 3},
        Config{"recursive_multiplying4", ScheduleKind::recursive_multiplying, 4},
        Config{"rabenseifner2", ScheduleKind::rabenseifner, 2},
        Config{"rabenseifner3_as_2", ScheduleKind::rabenseifner, 3},
        Config{"rabenseifner4", ScheduleKind::rabenseifner, 4},
        Config{"rabenseifner8", ScheduleKind::rabenseifner, 8}, Config{"ring", ScheduleKind::ring},
        Config{"ring_segments_of_40_bytes", ScheduleKind::ring, 4, 40},
        Config{"mpi_library", ScheduleKind::mpi_library},
        Config{"nodes_of_2_recursive_doubling", ScheduleKind::recursive_doubling, 4, 65536, 2},
        Config{"nodes_of_2_recursive_multiplying3", ScheduleKind::recursive_multiplying, 3, 65536,
               2},
        Config{"nodes_of_2_rabenseifner", ScheduleKind::rabenseifner, 4, 65536, 2},
        Config{"nodes_of_2_ring", ScheduleKind::ring, 4, 64, 2},
        Config{"nodes_of_3_knomial", ScheduleKind::knomial, 3, 65536, 3}),
    Name);

TEST_P(Allreduce, IntegerSumsAreExactForEveryCount) {
  tributary::Context ctx(Opts());
  tributary::AllReduce<std::vector<long>> r(ctx, "ints");
  for (std::size_t n : kCounts) {
    r.val.resize(n);
    for (std::size_t i = 0; i < n; ++i) r.val[i] = static_cast<long>(i) * (Rank() + 1) - Rank();
    r.StartReduce(tributary::Sum{});
    Wait(ctx, r);
    const long p = Size(), tri = p * (p + 1) / 2, ranks = p * (p - 1) / 2;
    bool ok = r.val.size() == n;
    for (std::size_t i = 0; ok && i < n; ++i) ok = r.val[i] == static_cast<long>(i) * tri - ranks;
    TRIBUTARY_EXPECT_ALL(ok);
  }
}

TEST_P(Allreduce, MinAndMaxOverOddCounts) {
  tributary::Context ctx(Opts());
  tributary::AllReduce<std::vector<int>> lo(ctx, "min"), hi(ctx, "max");
  for (std::size_t n : {std::size_t(3), std::size_t(65)}) {
    lo.val.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i)
      lo.val[i] = static_cast<int>((i + 3 * static_cast<std::size_t>(Rank())) % 7);
    hi.val = lo.val;
    lo.StartReduce(tributary::Min{});
    hi.StartReduce(tributary::Max{});
    Wait(ctx, lo);
    Wait(ctx, hi);
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) {
      int mn = 7, mx = -1;
      for (int q = 0; q < Size(); ++q) {
        const int v = static_cast<int>((i + 3 * static_cast<std::size_t>(q)) % 7);
        mn = std::min(mn, v);
        mx = std::max(mx, v);
      }
      ok = ok && lo.val[i] == mn && hi.val[i] == mx;
    }
    TRIBUTARY_EXPECT_ALL(ok);
  }
}

TEST_P(Allreduce, FloatSumsAgreeBitwiseOnEveryRank) {
  tributary::Context ctx(Opts());
  tributary::AllReduce<std::vector<double>> r(ctx, "doubles");
  const auto value = [](int q, std::size_t i) {
    return (i % 3 ? 1e16 : 1.0) * ((q + static_cast<int>(i)) % 2 ? 1 : -1) + 0.1 * q;
  };
  for (std::size_t n : {std::size_t(1), std::size_t(33), std::size_t(1) << 20}) {
    r.val.resize(n);
    for (std::size_t i = 0; i < n; ++i) r.val[i] = value(Rank(), i);
    r.StartReduce(tributary::Sum{});
    Wait(ctx, r);
    TRIBUTARY_EXPECT_ALL(SameBitsEverywhere(r.val));
    // Close to the serial sum (the float result depends on the combine order).
    bool ok = r.val.size() == n;
    for (std::size_t i = 0; ok && i < n; ++i) {
      double serial = 0;
      for (int q = 0; q < Size(); ++q) serial += value(q, i);
      ok = std::abs(r.val[i] - serial) <= 8.0 * Size();
    }
    TRIBUTARY_EXPECT_ALL(ok);
  }
}

TEST_P(Allreduce, NonCommutativeOperatorsKeepRankOrderOrAreRefused) {
  tributary::Context ctx(Opts());
  const bool keeps = tributary::IsOrderKeeping(GetParam().kind);
  for (std::size_t n : {std::size_t(1), std::size_t(5), std::size_t(4097)}) {
    tributary::AllReduce<std::vector<Perm>> r(ctx, "permutations");
    r.val.resize(n);
    for (std::size_t i = 0; i < n; ++i) r.val[i] = PermOf(Rank(), i);
    std::string error;
    try {
      r.StartReduce(PermCompose{});
      Wait(ctx, r);
    } catch (const tributary::UsageError& e) {
      error = e.what();
    }
    if (keeps || Size() == 1) {
      bool ok = error.empty() && r.val.size() == n;
      for (std::size_t i = 0; ok && i < n; ++i) ok = r.val[i] == PermProduct(i);
      TRIBUTARY_EXPECT_ALL(ok);
      TRIBUTARY_EXPECT_ALL(SameBitsEverywhere(r.val));
    } else {
      TRIBUTARY_EXPECT_ALL(error.find("does not keep rank order") != std::string::npos);
    }
  }
}

TEST_P(Allreduce, MatricesKeepRankOrder) {
  if (!tributary::IsOrderKeeping(GetParam().kind)) GTEST_SKIP() << "not order-keeping";
  tributary::Context ctx(Opts());
  tributary::AllReduce<std::vector<Mat>> r(ctx, "matrices");
  Mat expect = MatMul::identity();
  for (int q = Size() - 1; q >= 0; --q)
    MatMul{}(q % 2 ? Mat{1, q + 1, 0, 1} : Mat{1, 0, q + 2, 1}, expect);
  r.val.assign(5, Rank() % 2 ? Mat{1, Rank() + 1, 0, 1} : Mat{1, 0, Rank() + 2, 1});
  r.StartReduce(MatMul{});
  Wait(ctx, r);
  TRIBUTARY_EXPECT_ALL(
      r.val.size() == 5u &&
      std::all_of(r.val.begin(), r.val.end(), [&](const Mat& m) { return m == expect; }));
}

TEST_P(Allreduce, RegionalBatchAndMinLocTravelPacked) {
  tributary::Context ctx(Opts());
  tributary::Batch step(ctx, "step");
  auto& dt = step.Add<double>(tributary::Min{});
  auto& total = step.Add<long>(tributary::Sum{});
  auto& where = step.Add<tributary::ValueLoc<double>>(tributary::MinLoc{});
  const int lists = Rank() % 2 ? 0 : 3;
  step.Expect(lists);
  for (int i = 0; i < lists; ++i) {
    dt.Contribute(i, 1.0 + Rank() + i);
    total.Contribute(i, 1);
    where.Contribute(i, {2.0, Rank() * 10 + i});
  }
  Wait(ctx, step);
  TRIBUTARY_EXPECT_ALL(dt.val == 1.0 && total.val == 3L * ((Size() + 1) / 2) &&
                       where.val.value == 2.0 && where.val.index == 0);
}

TEST_P(Allreduce, ExactSumsSplitAtRecordsAndEqualTheSerialExactSum) {
  tributary::ContextOptions o = Opts();
  o.determinism = tributary::Determinism::rank_count_independent;
  tributary::Context ctx(o);
  TRIBUTARY_EXPECT_ALL(ExactRecordsCheck(ctx, -1));
}

// ---------------------------------------------------------------------------------------
// Reduce

class Reduce : public ::testing::TestWithParam<Config> {
 protected:
  tributary::ContextOptions Opts() const {
    return Options(GetParam(), tributary::Collective::reduce);
  }
};

INSTANTIATE_TEST_SUITE_P(
    Own, Reduce,
    ::testing::Values(Config{"binomial", ScheduleKind::binomial},
                      Config{"knomial3", ScheduleKind::knomial, 3},
                      Config{"pipelined_tree", ScheduleKind::pipelined_tree},
                      Config{"pipelined_tree_segments_of_24_bytes", ScheduleKind::pipelined_tree, 4,
                             24},
                      Config{"mpi_library", ScheduleKind::mpi_library},
                      Config{"reduce_scatter_gather", ScheduleKind::reduce_scatter_gather, 2},
                      Config{"reduce_scatter_gather4", ScheduleKind::reduce_scatter_gather, 4},
                      Config{"nodes_of_2_binomial", ScheduleKind::binomial, 4, 65536, 2},
                      Config{"nodes_of_2_reduce_scatter_gather",
                             ScheduleKind::reduce_scatter_gather, 2, 65536, 2},
                      Config{"nodes_of_2_pipelined_tree", ScheduleKind::pipelined_tree, 4, 48, 2}),
    Name);

TEST_P(Reduce, ToEveryRootExactlyAndOtherRanksKeepTheirValues) {
  tributary::Context ctx(Opts());
  tributary::Reduce<std::vector<long>> r(ctx, "to root");
  for (std::size_t n : kCounts) {
    for (int root = 0; root < Size(); ++root) {
      r.val.resize(n);
      for (std::size_t i = 0; i < n; ++i)
        r.val[i] = static_cast<long>(i % 1000) * (Rank() + 1) - Rank();
      const std::vector<long> mine = r.val;
      r.StartReduce(root, tributary::Sum{});
      Wait(ctx, r);
      const long p = Size(), tri = p * (p + 1) / 2, ranks = p * (p - 1) / 2;
      bool ok = r.val.size() == n;
      if (Rank() == root)
        for (std::size_t i = 0; ok && i < n; ++i)
          ok = r.val[i] == static_cast<long>(i % 1000) * tri - ranks;
      else
        ok = ok && r.val == mine;
      TRIBUTARY_EXPECT_ALL(ok);
    }
  }
}

// A separate input (MPI_Reduce's buffers): every rank's input stays as it was, the root's
// val (of another length before) receives the result, the other ranks' val is untouched,
// and the root's float result has the bits of the in-place start with the same schedule.
TEST_P(Reduce, SeparateInputStaysUnchangedAndTheRootsValGetsTheResult) {
  tributary::Context ctx(Opts());
  tributary::Reduce<std::vector<long>> r(ctx, "input");
  tributary::Reduce<std::vector<double>> f(ctx, "float input"), g(ctx, "float in place");
  for (std::size_t n : kCounts) {
    for (int root = 0; root < Size(); ++root) {
      std::vector<long> input(n);
      for (std::size_t i = 0; i < n; ++i)
        input[i] = static_cast<long>(i % 1000) * (Rank() + 1) - Rank();
      const std::vector<long> input_before = input;
      r.val.assign(n + 3, -7);
      r.StartReduce(root, tributary::Sum{}, input);
      std::vector<double> finput(n);
      for (std::size_t i = 0; i < n; ++i)
        finput[i] = 1.0 / (3.0 + static_cast<double>(i % 97) + Rank());
      const std::vector<double> finput_before = finput;
      f.val.assign(2, -1.0);
      g.val = finput;
      f.StartReduce(root, tributary::Sum{}, finput);
      g.StartReduce(root, tributary::Sum{});
      Wait(ctx, r);
      Wait(ctx, f);
      Wait(ctx, g);
      const long p = Size(), tri = p * (p + 1) / 2, ranks = p * (p - 1) / 2;
      bool ok = input == input_before && finput == finput_before;
      if (Rank() == root) {
        ok = ok && r.val.size() == n && f.val.size() == n &&
             std::memcmp(f.val.data(), g.val.data(), n * sizeof(double)) == 0;
        for (std::size_t i = 0; ok && i < n; ++i)
          ok = r.val[i] == static_cast<long>(i % 1000) * tri - ranks;
      } else {
        ok = ok && r.val == std::vector<long>(n + 3, -7) && f.val == std::vector<double>(2, -1.0);
      }
      TRIBUTARY_EXPECT_ALL(ok);
    }
  }
}

// The same with a user operator (the packed path) that does not commute.
TEST_P(Reduce, SeparateInputWithANonCommutativeOperator) {
  tributary::Context ctx(Opts());
  tributary::Reduce<std::vector<Perm>> r(ctx, "permutations from an input");
  for (std::size_t n : {std::size_t(1), std::size_t(9), std::size_t(3001)}) {
    for (int root = 0; root < Size(); ++root) {
      std::vector<Perm> input(n);
      for (std::size_t i = 0; i < n; ++i) input[i] = PermOf(Rank(), i);
      const std::vector<Perm> before = input;
      r.val.assign(1, Perm::Of(1));
      const std::vector<Perm> val_before = r.val;
      r.StartReduce(root, PermCompose{}, input);
      Wait(ctx, r);
      bool ok = input == before;
      if (Rank() == root) {
        ok = ok && r.val.size() == n;
        for (std::size_t i = 0; ok && i < n; ++i) ok = r.val[i] == PermProduct(i);
      } else {
        ok = ok && r.val == val_before;
      }
      TRIBUTARY_EXPECT_ALL(ok);
    }
  }
}

TEST_P(Reduce, NonCommutativeOperatorsGiveRankOrderWhateverTheRoot) {
  tributary::Context ctx(Opts());
  tributary::Reduce<std::vector<Perm>> r(ctx, "permutations");
  for (std::size_t n : {std::size_t(1), std::size_t(9), std::size_t(3001)}) {
    for (int root = 0; root < Size(); ++root) {
      r.val.resize(n);
      for (std::size_t i = 0; i < n; ++i) r.val[i] = PermOf(Rank(), i);
      r.StartReduce(root, PermCompose{});
      Wait(ctx, r);
      bool ok = r.val.size() == n;
      for (std::size_t i = 0; ok && i < n; ++i)
        ok = r.val[i] == (Rank() == root ? PermProduct(i) : PermOf(Rank(), i));
      TRIBUTARY_EXPECT_ALL(ok);
    }
  }
}

TEST_P(Reduce, RegionalContributionsInRankAndListOrderWhateverTheRoot) {
  // Three lists per rank contribute in a rotating order; the last list's slot goes to the
  // network as it is on the other ranks, whose val stays as it was.
  tributary::Context ctx(Opts());
  tributary::Reduce<std::vector<Perm>> r(ctx, "regional permutations");
  constexpr int kLists = 3;
  for (std::size_t n : {std::size_t(1), std::size_t(700)}) {
    for (int root = 0; root < Size(); ++root) {
      r.val.assign(n, Perm::Of(12345));
      const std::vector<Perm> mine = r.val;
      r.Expect(kLists, root, PermCompose{});
      for (int k = 0; k < kLists; ++k) {
        const int list = (k + root + Rank()) % kLists;
        std::vector<Perm> part(n);
        for (std::size_t i = 0; i < n; ++i) part[i] = PermOf(Rank() * kLists + list, i);
        r.Contribute(list, part);
      }
      Wait(ctx, r);
      bool ok = r.val.size() == n;
      for (std::size_t i = 0; ok && i < n; ++i) {
        if (Rank() == root) {
          Perm expect = PermOf(0, i);
          for (int q = 1; q < Size() * kLists; ++q) {
            Perm next = PermOf(q, i);
            PermCompose{}(expect, next);
            expect = next;
          }
          ok = r.val[i] == expect;
        } else {
          ok = r.val[i] == mine[i];
        }
      }
      TRIBUTARY_EXPECT_ALL(ok);
    }
  }
}

TEST_P(Reduce, LargeFloatVectorsMatchTheSerialSum) {
  tributary::Context ctx(Opts());
  tributary::Reduce<std::vector<double>> r(ctx, "large");
  const std::size_t n = (std::size_t(1) << 18) + 1;
  const int root = Size() - 1;
  r.val.resize(n);
  for (std::size_t i = 0; i < n; ++i) r.val[i] = 0.5 * static_cast<double>(i % 97) + Rank();
  r.StartReduce(root, tributary::Sum{});
  Wait(ctx, r);
  bool ok = true;
  if (Rank() == root)
    for (std::size_t i = 0; ok && i < n; ++i)
      ok = r.val[i] == 0.5 * static_cast<double>(i % 97) * Size() + Size() * (Size() - 1) / 2.0;
  TRIBUTARY_EXPECT_ALL(ok);
}

TEST_P(Reduce, ExactSumsSplitAtRecordsToEveryRoot) {
  tributary::ContextOptions o = Opts();
  o.determinism = tributary::Determinism::rank_count_independent;
  tributary::Context ctx(o);
  for (int root = 0; root < Size(); ++root) TRIBUTARY_EXPECT_ALL(ExactRecordsCheck(ctx, root));
}

// ---------------------------------------------------------------------------------------
// Allgather

class Allgather : public ::testing::TestWithParam<Config> {};

INSTANTIATE_TEST_SUITE_P(Own, Allgather,
                         ::testing::Values(Config{"ring", ScheduleKind::ring},
                                           Config{"recursive_doubling",
                                                  ScheduleKind::recursive_doubling},
                                           Config{"mpi_library", ScheduleKind::mpi_library}),
                         Name);

TEST_P(Allgather, BlocksArriveInRankOrder) {
  tributary::Context ctx(Options(GetParam(), tributary::Collective::allgather));
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(17), std::size_t(4097)}) {
    tributary::AllGather<std::vector<int>> g(ctx);
    g.local.resize(n);
    for (std::size_t i = 0; i < n; ++i) g.local[i] = Rank() * 100000 + static_cast<int>(i);
    g.StartReduce();
    Wait(ctx, g);
    bool ok = static_cast<int>(g.val.size()) == Size();
    for (int q = 0; ok && q < Size(); ++q) {
      const auto& block = g.val[static_cast<std::size_t>(q)];
      ok = block.size() == n;
      for (std::size_t i = 0; ok && i < n; ++i) ok = block[i] == q * 100000 + static_cast<int>(i);
    }
    TRIBUTARY_EXPECT_ALL(ok);
  }
}

// ---------------------------------------------------------------------------------------
// Several at once, and errors

TEST(Schedules, ManyInFlightWithDifferentStartOrdersNeverMixMessages) {
  tributary::ContextOptions o;
  o.allreduce_schedule = ScheduleKind::rabenseifner;
  o.reduce_schedule = ScheduleKind::pipelined_tree;
  o.allgather_schedule = ScheduleKind::recursive_doubling;
  o.schedule_params.segment_bytes = 64;
  tributary::Context ctx(o);
  std::vector<tributary::AllReduce<std::vector<long>>> sums;
  std::vector<tributary::Reduce<std::vector<long>>> reduces;
  for (int k = 0; k < 4; ++k) sums.emplace_back(ctx, "sum" + std::to_string(k));
  for (int k = 0; k < 3; ++k) reduces.emplace_back(ctx, "reduce" + std::to_string(k));
  std::mt19937 rng(99u + static_cast<unsigned>(Rank()));
  bool ok = true;
  for (int gen = 0; gen < 20; ++gen) {
    std::vector<int> order(sums.size() + reduces.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (int k : order) {
      const auto n = static_cast<std::size_t>(k * 37 + 1);
      if (k < 4) {
        sums[static_cast<std::size_t>(k)].val.assign(n, static_cast<long>(k + gen));
        sums[static_cast<std::size_t>(k)].StartReduce(tributary::Sum{});
      } else {
        auto& r = reduces[static_cast<std::size_t>(k - 4)];
        r.val.assign(n, static_cast<long>(k + gen));
        r.StartReduce((k + gen) % Size(), tributary::Sum{});
      }
    }
    std::shuffle(order.begin(), order.end(), rng);
    // Own schedules move only when polled: waiting on one object while another rank waits
    // on another needs the Context's progress (what an executor's progress hook does).
    for (int k : order) {
      if (k < 4) {
        Wait(ctx, sums[static_cast<std::size_t>(k)]);
        ok = ok &&
             sums[static_cast<std::size_t>(k)].val.back() == static_cast<long>(k + gen) * Size();
      } else {
        auto& r = reduces[static_cast<std::size_t>(k - 4)];
        Wait(ctx, r);
        const long expect =
            static_cast<long>(k + gen) * (Rank() == (k + gen) % Size() ? Size() : 1);
        ok = ok && std::all_of(r.val.begin(), r.val.end(), [&](long v) { return v == expect; });
      }
    }
  }
  TRIBUTARY_EXPECT_ALL(ok);
}

template <class Start>
std::string ErrorOf(Start start) {
  try {
    start();
  } catch (const tributary::UsageError& e) {
    return e.what();
  }
  return "";
}

// One Reduce object whose sizes the tree sends to k-nomial trees of different radix: each
// generation runs the radix chosen for it. Radix 2 first makes rank 2 of 4 an inner node;
// the radix-4 tree that follows has it a leaf, whose value the reduce must leave unchanged.
TEST(Schedules, AReusedScheduleTakesEachGenerationsRadix) {
  const std::string path = "tributary_radix_tree_" + std::to_string(Size()) + ".json";
  if (Rank() == 0)
    std::ofstream(path) << R"({"tributary_selection": 1, "tree": [
      {"collective": "reduce", "then": [
        {"msg_size": "<= 4", "then": {"schedule": "knomial", "radix": 2}},
        {"msg_size": "any", "then": {"schedule": "knomial", "radix": 4}}]},
      {"collective": "any", "then": {"schedule": "mpi_library"}}]})";
  tributary::ContextOptions o;
  o.selection_file = path;
  tributary::Context ctx(o);
  tributary::Reduce<std::vector<int>> r(ctx, "radix per generation");
  bool ok = true;
  for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(1), std::size_t(3)}) {
    const std::vector<int> mine(n, Rank() + 1);
    r.val = mine;
    r.StartReduce(0, tributary::Sum{});
    Wait(ctx, r);
    ok = ok &&
         (Rank() == 0 ? r.val == std::vector<int>(n, Size() * (Size() + 1) / 2) : r.val == mine);
  }
  TRIBUTARY_EXPECT_ALL(ok);
  if (Rank() == 0) std::remove(path.c_str());
}

void AddInts(void* in, void* inout, int* len, MPI_Datatype*) {
  for (int i = 0; i < *len; ++i) static_cast<int*>(inout)[i] += static_cast<int*>(in)[i];
}

// A small allreduce on the library's schedule makes one persistent request and starts it
// again each generation; another count makes a new one (on every rank at once: no rank's
// collectives pair with another's), a message over the persistent limit (4 KiB) takes
// MPI_Iallreduce. The values move between buffers whose address changes between
// generations.
TEST(Schedules, TheLibrarysScheduleRestartsOnePersistentRequest) {
  tributary::ContextOptions o;
  o.allreduce_schedule = ScheduleKind::mpi_library;
  o.debug = tributary::DebugLevel::none;
  tributary::Context ctx(o);
  bool ok = true;
  const long inits0 = g_allreduce_inits, posts0 = g_iallreduces;
  {
    tributary::AllReduce<double> a(ctx, "persistent scalar");
    for (int i = 0; i < 40; ++i) {
      a.val = Rank() + i;
      a.StartReduce(tributary::Sum{});
      Wait(ctx, a);
      ok = ok && a.val == Size() * (Size() - 1) / 2.0 + Size() * i;
    }
  }
  const long scalar_inits = g_allreduce_inits - inits0, scalar_posts = g_iallreduces - posts0;
  {
    tributary::AllReduce<std::vector<double>> v(ctx, "persistent vector");
    for (std::size_t n : {1, 3, 3, 600, 2, 2}) {
      std::vector<double> mine(n);
      for (std::size_t k = 0; k < n; ++k) mine[k] = Rank() * 1000.0 + static_cast<double>(k);
      v.val = std::move(mine);
      v.StartReduce(tributary::Max{});
      Wait(ctx, v);
      for (std::size_t k = 0; k < n; ++k)
        ok = ok && v.val.size() == n && v.val[k] == (Size() - 1) * 1000.0 + static_cast<double>(k);
    }
  }
  const long vector_inits = g_allreduce_inits - inits0 - scalar_inits;
  const long vector_posts = g_iallreduces - posts0 - scalar_posts;
  TRIBUTARY_EXPECT_ALL(ok);
#ifdef TEST_ALLREDUCE_INIT
  if (Size() > 1) {
    EXPECT_EQ(scalar_inits, 1);
    EXPECT_EQ(scalar_posts, 0);
    EXPECT_EQ(vector_inits, 3);  // counts 1, 3 and 2
    EXPECT_EQ(vector_posts, 1);  // 600 doubles
  }
#else
  (void)vector_inits;
  (void)vector_posts;
#endif
  // The length check's packed message (from the second generation of a length on: the
  // header, then the elements) runs on a request of its own too, made once for its size.
  tributary::ContextOptions checked = o;
  checked.debug = tributary::DebugLevel::basic;
  tributary::Context checking(checked);
  tributary::AllReduce<std::vector<double>> w(checking, "packed vector");
  long packed_inits = 0, packed_posts = 0;
  for (int i = 0; i < 5; ++i) {
    if (i == 2) packed_inits = g_allreduce_inits, packed_posts = g_iallreduces;
    w.val.assign(4, Rank() + i);
    w.StartReduce(tributary::Sum{});
    Wait(checking, w);
    ok = ok && w.val == std::vector<double>(4, Size() * (Size() - 1) / 2.0 + Size() * i);
  }
  TRIBUTARY_EXPECT_ALL(ok);
#ifdef TEST_ALLREDUCE_INIT
  if (Size() > 1) {
    EXPECT_EQ(g_allreduce_inits, packed_inits);
    EXPECT_EQ(g_iallreduces, packed_posts);
  }
#else
  (void)packed_inits;
  (void)packed_posts;
#endif
  // Another length: a new packed type, and a new request on it, with the right values.
  for (int i = 0; i < 3; ++i) {
    w.val.assign(7, Rank() - i);
    w.StartReduce(tributary::Sum{});
    Wait(checking, w);
    ok = ok && w.val == std::vector<double>(7, Size() * (Size() - 1) / 2.0 - Size() * i);
  }
  TRIBUTARY_EXPECT_ALL(ok);
  // A user's MPI_Op, freed and made again between generations (its handle may come back
  // equal on some ranks only): never bound to a persistent request.
  tributary::AllReduce<int> u(ctx, "user MPI_Op");
  const long user_inits = g_allreduce_inits, user_posts = g_iallreduces;
  for (int i = 0; i < 4; ++i) {
    MPI_Op add = MPI_OP_NULL;
    MPI_Op_create(&AddInts, 1, &add);
    u.val = Rank() + i;
    u.StartReduce(add);
    Wait(ctx, u);
    MPI_Op_free(&add);
    ok = ok && u.val == Size() * (Size() - 1) / 2 + Size() * i;
  }
  TRIBUTARY_EXPECT_ALL(ok);
#ifdef TEST_ALLREDUCE_INIT
  if (Size() > 1) {
    EXPECT_EQ(g_allreduce_inits, user_inits);
    EXPECT_EQ(g_iallreduces - user_posts, 4);
  }
#else
  (void)user_inits;
  (void)user_posts;
#endif
}

TEST(Schedules, SchedulesThatDoNotApplyAreClearErrors) {
  tributary::ContextOptions o;
  o.allreduce_schedule = ScheduleKind::pipelined_tree;  // reduce only
  o.reduce_schedule = ScheduleKind::ring;               // allreduce and allgather only
  o.allgather_schedule = ScheduleKind::binomial;        // no allgather
  tributary::Context ctx(o);
  tributary::AllReduce<double> a(ctx);
  tributary::Reduce<double> r(ctx);
  tributary::AllGather<int> g(ctx);
  const auto a_error = ErrorOf([&] {
    a.StartReduce(tributary::Sum{});
    Wait(ctx, a);
  });
  const auto r_error = ErrorOf([&] {
    r.StartReduce(0, tributary::Sum{});
    Wait(ctx, r);
  });
  const auto g_error = ErrorOf([&] {
    g.StartReduce();
    Wait(ctx, g);
  });
  if (Size() > 1) {
    TRIBUTARY_EXPECT_ALL(a_error.find("'pipelined_tree' does not implement") != std::string::npos);
    TRIBUTARY_EXPECT_ALL(r_error.find("'ring' does not implement") != std::string::npos);
    TRIBUTARY_EXPECT_ALL(g_error.find("'binomial' does not implement") != std::string::npos);
  }
}

TEST(Schedules, BadParametersAreClearErrors) {
  for (auto kind :
       {ScheduleKind::knomial, ScheduleKind::rabenseifner, ScheduleKind::recursive_multiplying}) {
    tributary::ContextOptions o;
    o.allreduce_schedule = kind;
    o.schedule_params.radix = 1;
    tributary::Context ctx(o);
    tributary::AllReduce<double> a(ctx);
    const auto error = ErrorOf([&] {
      a.StartReduce(tributary::Sum{});
      Wait(ctx, a);
    });
    if (Size() > 1)
      TRIBUTARY_EXPECT_ALL(error.find("radix must be at least 2, got 1") != std::string::npos);
  }
  {
    tributary::ContextOptions o;
    o.allreduce_schedule = ScheduleKind::mpi_library;
    o.schedule_params.node_aware = true;
    o.ranks_per_node = 2;
    tributary::Context ctx(o);
    tributary::AllReduce<double> a(ctx);
    const auto error = ErrorOf([&] {
      a.StartReduce(tributary::Sum{});
      Wait(ctx, a);
    });
    if (Size() > 1) TRIBUTARY_EXPECT_ALL(error.find("not mpi_library") != std::string::npos);
  }
  {
    tributary::ContextOptions o;
    o.ranks_per_node = -1;
    EXPECT_THROW(tributary::Context ctx(o), tributary::UsageError);
  }
}

// Virtual nodes of 3 ranks whose second and third ranks are bound to CPUs in reverse
// order: with hardware_node_order a commutative operator combines within the node in
// hardware order (one more communicator on such a node), a non-commutative one still in
// rank order; results are right either way, for allreduce and for a reduce to every root.
TEST(Schedules, NodesCombineInHardwareOrderWhereBound) {
#if defined(__linux__) && TRIBUTARY_HAVE_HWLOC
  // The CPUs of all ranks together (a launcher may have bound each rank to one); this
  // thread is then bound to one of them.
  cpu_set_t original, any;
  ASSERT_EQ(sched_getaffinity(0, sizeof original, &original), 0);
  MPI_Allreduce(&original, &any, static_cast<int>(sizeof any), MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &any)) cpus.push_back(c);
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  const int local = Rank() % 3, node_size = std::min(3, Size() - Rank() / 3 * 3);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpus[local == 1 ? 1 : 0], &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  int comms[2] = {0, 0};
  for (bool hardware : {false, true}) {
    tributary::ContextOptions o;
    o.ranks_per_node = 3;
    o.schedule_params.node_aware = true;
    o.hardware_node_order = hardware;
    o.allreduce_schedule = ScheduleKind::binomial;
    o.reduce_schedule = ScheduleKind::binomial;
    tributary::Context ctx(o);
    comms[hardware] = ctx.CommunicatorsCreated();
    TRIBUTARY_EXPECT_ALL(ctx.NodeInHardwareOrder() == (hardware && node_size == 3));
    // Integer sums are exact in any order; float sums must agree bitwise on every rank.
    tributary::AllReduce<std::vector<long>> sum(ctx, "sum");
    tributary::AllReduce<std::vector<double>> fsum(ctx, "float sum");
    tributary::AllReduce<std::vector<Perm>> perms(ctx, "permutations");
    tributary::Reduce<std::vector<long>> to_root(ctx, "reduce");
    const std::size_t n = 1000;
    for (int gen = 0; gen < 3; ++gen) {
      sum.val.assign(n, Rank() + 1 + gen);
      fsum.val.resize(n);
      for (std::size_t i = 0; i < n; ++i)
        fsum.val[i] = 1.0 / (Rank() + 1 + static_cast<double>(i) * 1e-3);
      perms.val.resize(n);
      for (std::size_t i = 0; i < n; ++i) perms.val[i] = PermOf(Rank(), i);
      sum.StartReduce(tributary::Sum{});
      fsum.StartReduce(tributary::Sum{});
      perms.StartReduce(PermCompose{});
      Wait(ctx, sum);
      Wait(ctx, fsum);
      Wait(ctx, perms);
      const long expect =
          static_cast<long>(Size()) * (Size() + 1) / 2 + static_cast<long>(Size()) * gen;
      TRIBUTARY_EXPECT_ALL(
          std::all_of(sum.val.begin(), sum.val.end(), [&](long v) { return v == expect; }));
      TRIBUTARY_EXPECT_ALL(SameBitsEverywhere(fsum.val));
      bool ordered = true;
      for (std::size_t i = 0; ordered && i < n; ++i) ordered = perms.val[i] == PermProduct(i);
      TRIBUTARY_EXPECT_ALL(ordered);
    }
    for (int root = 0; root < Size(); ++root) {
      to_root.val.assign(n, Rank() + 1);
      to_root.StartReduce(root, tributary::Sum{});
      Wait(ctx, to_root);
      const long expect =
          Rank() == root ? static_cast<long>(Size()) * (Size() + 1) / 2 : Rank() + 1;
      TRIBUTARY_EXPECT_ALL(
          std::all_of(to_root.val.begin(), to_root.val.end(), [&](long v) { return v == expect; }));
    }
  }
  TRIBUTARY_EXPECT_ALL(comms[1] == comms[0] + (node_size == 3 ? 1 : 0));
  ASSERT_EQ(sched_setaffinity(0, sizeof original, &original), 0);
#else
  GTEST_SKIP() << "needs Linux and hwloc";
#endif
}

TEST(Schedules, VirtualNodesGroupConsecutiveRanks) {
  for (int per_node : {1, 2, 3}) {
    tributary::ContextOptions o;
    o.ranks_per_node = per_node;
    tributary::Context ctx(o);
    TRIBUTARY_EXPECT_ALL(ctx.NodeCount() == (Size() + per_node - 1) / per_node);
  }
  tributary::Context flat;
  TRIBUTARY_EXPECT_ALL(flat.NodeCount() == 1);
}

// With ProgressPolicy::thread an own schedule completes while the driver only sleeps and
// reads the state (which never advances anything); with polling it would stay in flight.
TEST(Schedules, ProgressThreadAdvancesWithoutPolling) {
  for (auto kind : {ScheduleKind::ring, ScheduleKind::binomial}) {
    tributary::ContextOptions o;
    o.allreduce_schedule = kind;
    o.schedule_params.segment_bytes = 4096;
    o.progress = tributary::ProgressPolicy::thread;
    tributary::Context ctx(o);
    tributary::AllReduce<std::vector<long>> r(ctx, "threaded");
    r.val.assign(100000, Rank() + 1);
    r.StartReduce(tributary::Sum{});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (r.State() != tributary::Phase::done && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const bool done = r.State() == tributary::Phase::done;
    TRIBUTARY_EXPECT_ALL(done);
    ASSERT_EQ(r.CheckReduce(), TaskStatus::complete);
    const long expect = static_cast<long>(Size()) * (Size() + 1) / 2;
    TRIBUTARY_EXPECT_ALL(
        std::all_of(r.val.begin(), r.val.end(), [&](long v) { return v == expect; }));
  }
}

}  // namespace
