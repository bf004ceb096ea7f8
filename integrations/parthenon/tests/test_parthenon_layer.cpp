// Parthenon's reduction types on Tributary (integrations/parthenon), used as Parthenon's
// solvers and examples use them, at 1-4 ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "mpi_test.hpp"
#include "parthenon_stand_in.hpp"
#include "summable.hpp"

namespace {

using tributary::testing::Rank;
using tributary::testing::Size;

// Parthenon adds tasks as `&AllReduce<Real>::CheckReduce` with its own TaskStatus.
static_assert(
    std::is_same_v<decltype(&parthenon::AllReduce<double>::CheckReduce),
                   parthenon::TaskStatus (
                       tributary::parthenon_interop::Handle<double, tributary::AllReduce>::*)()>);
static_assert(std::is_same_v<decltype(&parthenon::AllReduce<double>::StartReduce),
                             parthenon::TaskStatus (parthenon::AllReduce<double>::*)(MPI_Op)>);
static_assert(std::is_same_v<decltype(&parthenon::Reduce<int>::StartReduce),
                             parthenon::TaskStatus (parthenon::Reduce<int>::*)(int, MPI_Op)>);
// Params stores them by copy.
static_assert(std::is_copy_constructible_v<parthenon::AllReduce<double>>);
static_assert(std::is_copy_assignable_v<parthenon::AllReduce<std::vector<int>>>);

template <class R>
void Wait(R& r) {
  while (r.CheckReduce() != parthenon::TaskStatus::complete) {
  }
}

std::uint64_t Bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// The reset, per-partition `val +=` and start of Parthenon's DotProduct
// (solvers/solver_utils.hpp), in the MPI_SUM form of AllReduce<Real>.
TEST(ParthenonLayer, SumOfPartitionsAsParthenonsSolversDoIt) {
  parthenon::AllReduce<double> dot;
  for (int cycle = 0; cycle < 3; ++cycle) {
    dot.val = 0.0;
    for (int p = 0; p < 3; ++p) dot.val += 0.5 * (Rank() + 1) + p + cycle;
    EXPECT_EQ(dot.StartReduce(MPI_SUM), parthenon::TaskStatus::complete);
    Wait(dot);
    double want = 0;
    for (int r = 0; r < Size(); ++r)
      for (int p = 0; p < 3; ++p) want += 0.5 * (r + 1) + p + cycle;
    TRIBUTARY_EXPECT_ALL(static_cast<double>(dot.val) == want);
  }
}

// Copies share the Tributary object (Params keeps a copy; the original goes away); each
// copy keeps its own `val`, and the result goes to the copy that checks.
TEST(ParthenonLayer, CopiesShareTheObjectNotTheValue) {
  parthenon::AllReduce<double> stored;
  {
    parthenon::AllReduce<double> original;
    stored = original;
  }
  parthenon::AllReduce<double> other = stored;
  EXPECT_EQ(&other.Tributary(), &stored.Tributary());
  stored.val = 1.0;
  other.val = 42.0;
  stored.StartReduce(MPI_SUM);
  Wait(stored);
  TRIBUTARY_EXPECT_ALL(static_cast<double>(stored.val) == Size());
  TRIBUTARY_EXPECT_ALL(static_cast<double>(other.val) == 42.0);
  const int live = tributary::parthenon_interop::SharedContext().LiveObjects();
  { parthenon::AllReduce<double> more = stored; }
  TRIBUTARY_EXPECT_ALL(tributary::parthenon_interop::SharedContext().LiveObjects() == live);
}

// Where Parthenon ignores a second start and answers "complete" to a check before any
// start, Tributary says what went wrong.
TEST(ParthenonLayer, DoubleStartAndCheckBeforeStartAreRefused) {
  parthenon::AllReduce<double> r;
  bool refused = false;
  try {
    r.CheckReduce();
  } catch (const tributary::UsageError&) {
    refused = true;
  }
  TRIBUTARY_EXPECT_ALL(refused);
  r.val = 1.0;
  r.StartReduce(MPI_SUM);
  std::string message;
  if (r.Tributary().InFlight()) {
    try {
      r.StartReduce(MPI_SUM);
    } catch (const tributary::UsageError& e) {
      message = e.what();
    }
    EXPECT_NE(message.find("AllReduce<double>"), std::string::npos) << message;
  }
  Wait(r);
  TRIBUTARY_EXPECT_ALL(static_cast<double>(r.val) == Size());
}

// Parthenon's poisson example: Reduce<int> to rank 0 with MPI_MAX, and an int written
// through a pointer to `val`.
TEST(ParthenonLayer, ReduceToRootLeavesTheOthersAlone) {
  parthenon::Reduce<int> max_rank;
  int* p = &max_rank.val;
  *p = Rank();
  max_rank.StartReduce(0, MPI_MAX);
  Wait(max_rank);
  TRIBUTARY_EXPECT_ALL(max_rank.val == (Rank() == 0 ? Size() - 1 : Rank()));
}

TEST(ParthenonLayer, VectorAndOperatorsMapToTributarys) {
  parthenon::AllReduce<std::vector<int>> v;
  v.val.assign(10, 0);
  for (int n = 0; n < 10; ++n) v.val[n] += n;
  v.StartReduce(MPI_SUM);
  Wait(v);
  bool ok = true;
  for (int n = 0; n < 10; ++n) ok = ok && v.val[n] == n * Size();
  TRIBUTARY_EXPECT_ALL(ok);

  parthenon::AllReduce<int> band;
  band.val = 0xff ^ (1 << Rank());
  band.StartReduce(MPI_BAND);
  Wait(band);
  int want = 0xff;
  for (int r = 0; r < Size(); ++r) want &= ~(1 << r);
  TRIBUTARY_EXPECT_ALL(band.val == want);

  parthenon::AllReduce<double> lo;
  lo.val = std::numeric_limits<double>::max();
  lo.val = std::min(10.0 + Rank(), lo.val);  // GlobalMinLocal's form
  lo.StartReduce(MPI_MIN);
  Wait(lo);
  TRIBUTARY_EXPECT_ALL(static_cast<double>(lo.val) == 10.0);
}

#if TRIBUTARY_HAVE_KOKKOS
// Parthenon's poisson example reduces a HostArray1D<Real> in place.
TEST(ParthenonLayer, HostViewReducedInPlace) {
  parthenon::AllReduce<Kokkos::View<double*, Kokkos::LayoutRight, Kokkos::HostSpace>> view;
  view.val = decltype(view.val)("Reduce me", 10);
  auto alias = view.val;
  for (int i = 0; i < 10; ++i) view.val(i) = i;
  view.StartReduce(MPI_SUM);
  Wait(view);
  bool ok = alias.data() == view.val.data();
  for (int i = 0; i < 10; ++i) ok = ok && alias(i) == i * Size();
  TRIBUTARY_EXPECT_ALL(ok);
}

// Parthenon's HostArray1D is a ParArrayGeneric: a View and a state, with KokkosView().
struct ArrayWrapper {
  using View = Kokkos::View<double*, Kokkos::LayoutRight, Kokkos::HostSpace>;
  View view;
  View& KokkosView() { return view; }
  const View& KokkosView() const { return view; }
};

TEST(ParthenonLayer, ArrayWrapperReducesItsView) {
  parthenon::AllReduce<ArrayWrapper> r;
  static_assert(std::is_same_v<decltype(r)::reduced_type, ArrayWrapper::View>);
  r.val.view = ArrayWrapper::View("wrapped", 3);
  for (int i = 0; i < 3; ++i) r.val.view(i) = Rank() + i;
  r.StartReduce(MPI_MAX);
  Wait(r);
  bool ok = true;
  for (int i = 0; i < 3; ++i) ok = ok && r.val.view(i) == Size() - 1 + i;
  TRIBUTARY_EXPECT_ALL(ok);
}
#endif

// Blocks of values whose rounded partial sums depend on how they are grouped; twelve
// blocks spread over the ranks as Parthenon spreads its mesh blocks (contiguous ranges).
std::vector<double> BlockPartials() {
  std::vector<double> v;
  for (int b = 0; b < 12; ++b)
    v.push_back((b % 3 == 0 ? 1e16 : 1.0) * (b % 2 ? -1 : 1) + 0.1 * b + std::ldexp(1.0, -b));
  return v;
}

// rank_count_independent: the partitions' partials added with `val +=` reduce as their
// exact sum, the same bits at every rank count; a write through the pointer falls back to
// the rank's rounded total, as it is.
TEST(ParthenonLayer, RankCountIndependentFromPartitionPartials) {
  parthenon::AllReduce<double> dot;
  dot.Tributary().SetDeterminism(tributary::Determinism::rank_count_independent);
  const auto parts = BlockPartials();
  const int n = static_cast<int>(parts.size());
  const int first = n * Rank() / Size(), last = n * (Rank() + 1) / Size();
  dot.val = 0.0;
  for (int b = first; b < last; ++b) dot.val += parts[b];
  EXPECT_TRUE(dot.val.Exact());
  dot.StartReduce(MPI_SUM);
  Wait(dot);
  tributary::ExactSum exact;
  double naive = 0;
  for (double x : parts) {
    exact.Add(x);
    naive += x;
  }
  const std::uint64_t want = Bits(exact.Round());
  TRIBUTARY_EXPECT_ALL(Bits(dot.val) == want);
  EXPECT_NE(Bits(naive), want) << "the blocks should not sum exactly in order";

  dot.val = 0.0;
  double* p = &dot.val;
  for (int b = first; b < last; ++b) *p += parts[b];
  EXPECT_FALSE(dot.val.Exact());
  dot.StartReduce(MPI_SUM);
  Wait(dot);
  double rounded_by_rank = 0;
  {
    tributary::ExactSum totals;
    for (int r = 0; r < Size(); ++r) {
      double t = 0;
      for (int b = n * r / Size(); b < n * (r + 1) / Size(); ++b) t += parts[b];
      totals.Add(t);
    }
    rounded_by_rank = totals.Round();
  }
  TRIBUTARY_EXPECT_ALL(Bits(dot.val) == Bits(rounded_by_rank));
}

// BiCGSTAB's `ts` and `tt`, fused into one message; started in either order.
TEST(ParthenonLayer, FusedPairTravelsInOneBatch) {
  parthenon::AllReduce<double> ts, tt;
  tributary::parthenon_interop::Fuse(MPI_SUM, ts, tt);
  parthenon::AllReduce<double> ts_copy = ts;  // Params keeps copies: they share the fusion
  bool refused = false;
  try {
    ts.Tributary();
  } catch (const tributary::UsageError&) {
    refused = true;
  }
  EXPECT_TRUE(refused);
  for (int cycle = 0; cycle < 4; ++cycle) {
    auto& first = cycle % 2 ? tt : ts_copy;
    auto& second = cycle % 2 ? ts_copy : tt;
    ts_copy.val = 0.0;
    ts_copy.val += 1.0 + Rank();
    tt.val = 0.0;
    tt.val += 0.25 * cycle;
    first.StartReduce(MPI_SUM);
    // The message goes with the last start: the first cannot complete before it.
    TRIBUTARY_EXPECT_ALL(first.CheckReduce() == parthenon::TaskStatus::incomplete);
    second.StartReduce(MPI_SUM);
    Wait(first);
    Wait(second);
    TRIBUTARY_EXPECT_ALL(static_cast<double>(ts_copy.val) == Size() * (Size() + 1) / 2.0);
    TRIBUTARY_EXPECT_ALL(static_cast<double>(tt.val) == 0.25 * cycle * Size());
  }
  std::string message;
  parthenon::AllReduce<double> started;
  started.val = 1.0;
  started.StartReduce(MPI_SUM);
  Wait(started);
  try {
    tributary::parthenon_interop::Fuse(MPI_SUM, started, ts);
  } catch (const tributary::UsageError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("already fused or started"), std::string::npos) << message;
}

using Pair = tributary::testing::SummableArray<double, 2>;
using tributary::parthenon_interop::TrackedContainer;

// Parthenon's BiCGSTAB since 2025: two dot products through one AllReduce of a summable
// array, each partition's partial pair added with `val +=`. Any contiguous container works
// as in Parthenon; Parthenon's own std::vector and View forms still do.
TEST(ParthenonLayer, SummableArrayAsParthenonsBiCGSTABReducesIt) {
  parthenon::AllReduce<Pair> dots;
  static_assert(std::is_same_v<decltype(dots.val), TrackedContainer<Pair>>);
  static_assert(std::is_same_v<decltype(dots)::reduced_type, Pair>);
  for (int cycle = 0; cycle < 3; ++cycle) {
    dots.val = Pair();
    for (int p = 0; p < 3; ++p) {
      Pair partial;
      partial[0] = 0.5 * (Rank() + 1) + p;
      partial[1] = -2.0 * p + cycle;
      dots.val += partial;
    }
    EXPECT_TRUE(dots.val.Exact());
    dots.StartReduce(MPI_SUM);
    Wait(dots);
    double want0 = 0, want1 = 0;
    for (int r = 0; r < Size(); ++r)
      for (int p = 0; p < 3; ++p) {
        want0 += 0.5 * (r + 1) + p;
        want1 += -2.0 * p + cycle;
      }
    TRIBUTARY_EXPECT_ALL(dots.val[0] == want0 && dots.val[1] == want1);
  }
  parthenon::AllReduce<Pair> high;
  high.val[0] = Rank();
  high.val[1] = -Rank();
  high.StartReduce(MPI_MAX);
  Wait(high);
  TRIBUTARY_EXPECT_ALL(high.val[0] == Size() - 1 && high.val[1] == 0);
  // The regional combine on the same object: each partition's pair in list order.
  dots.Tributary().Expect(2, tributary::Sum{});
  for (int p = 1; p >= 0; --p) {
    Pair partial;
    partial[0] = p + 1;
    partial[1] = Rank();
    dots.Tributary().Contribute(p, partial);
  }
  Wait(dots);
  TRIBUTARY_EXPECT_ALL(dots.val[0] == 3.0 * Size() && dots.val[1] == Size() * (Size() - 1.0));
}

// rank_count_independent: partitions' pairs added with `val +=` reduce as their exact sums,
// each element the same bits at every rank count; an element written past the tracker
// falls back to the rank's rounded totals.
TEST(ParthenonLayer, RankCountIndependentPairsFromPartitionPartials) {
  parthenon::AllReduce<Pair> dots;
  dots.Tributary().SetDeterminism(tributary::Determinism::rank_count_independent);
  const auto parts = BlockPartials();
  const int n = static_cast<int>(parts.size());
  const int first = n * Rank() / Size(), last = n * (Rank() + 1) / Size();
  auto pair_of = [&](int b) {
    Pair p;
    p[0] = parts[static_cast<std::size_t>(b)];
    p[1] = parts[static_cast<std::size_t>((b + 5) % n)] * 0.75;
    return p;
  };
  dots.val = Pair();
  for (int b = first; b < last; ++b) dots.val += pair_of(b);
  EXPECT_TRUE(dots.val.Exact());
  dots.StartReduce(MPI_SUM);
  Wait(dots);
  tributary::ExactSum exact[2];
  for (int b = 0; b < n; ++b)
    for (int e = 0; e < 2; ++e) exact[e].Add(pair_of(b)[e]);
  TRIBUTARY_EXPECT_ALL(Bits(dots.val[0]) == Bits(exact[0].Round()) &&
                       Bits(dots.val[1]) == Bits(exact[1].Round()));

  dots.val = Pair();
  for (int b = first; b < last; ++b) {
    dots.val[0] += pair_of(b)[0];  // past the tracker
    dots.val[1] += pair_of(b)[1];
  }
  EXPECT_FALSE(dots.val.Exact());
  dots.StartReduce(MPI_SUM);
  Wait(dots);
  tributary::ExactSum totals[2];
  for (int r = 0; r < Size(); ++r) {
    double t[2] = {0, 0};
    for (int b = n * r / Size(); b < n * (r + 1) / Size(); ++b)
      for (int e = 0; e < 2; ++e) t[e] += pair_of(b)[e];
    for (int e = 0; e < 2; ++e) totals[e].Add(t[e]);
  }
  TRIBUTARY_EXPECT_ALL(Bits(dots.val[0]) == Bits(totals[0].Round()) &&
                       Bits(dots.val[1]) == Bits(totals[1].Round()));
}

// Ordered terms (the opt-in for fast and run_to_run): the partials added with `val +=` in
// any order give the same bits, for a double and for a pair; without it, the order shows.
TEST(ParthenonLayer, OrderedTermsDoNotDependOnTheOrderOfTheAdditions) {
  const auto parts = BlockPartials();
  const int n = static_cast<int>(parts.size());
  std::vector<int> order(static_cast<std::size_t>(n));
  for (int b = 0; b < n; ++b) order[static_cast<std::size_t>(b)] = b;
  parthenon::AllReduce<double> dot;
  parthenon::AllReduce<Pair> dots;
  for (bool ordered : {false, true}) {
    tributary::parthenon_interop::SetOrderedTerms(ordered);
    std::set<std::uint64_t> seen, seen_pair;
    for (int rep = 0; rep < 6; ++rep) {
      // The order of the additions differs between repetitions, as task timing makes it.
      std::rotate(order.begin(), order.begin() + 5, order.end());
      if (rep % 2) std::reverse(order.begin(), order.end());
      dot.val = 0.0;
      dots.val = Pair();
      for (int b : order) {
        dot.val += parts[static_cast<std::size_t>(b)];
        Pair p;
        p[0] = parts[static_cast<std::size_t>(b)] * (Rank() + 1);
        p[1] = 1.0;
        dots.val += p;
      }
      dot.StartReduce(MPI_SUM);
      dots.StartReduce(MPI_SUM);
      Wait(dot);
      Wait(dots);
      seen.insert(Bits(dot.val));
      seen_pair.insert(Bits(dots.val[0]));
      TRIBUTARY_EXPECT_ALL(dots.val[1] == n * Size());
    }
    if (ordered)
      TRIBUTARY_EXPECT_ALL(seen.size() == 1 && seen_pair.size() == 1);
    else
      EXPECT_GT(seen.size(), 1u) << "the data should show the order of the additions";
  }
  // The ordered value: the terms smallest magnitude first (of two of one magnitude, the
  // positive first), after the value assigned.
  std::vector<double> sorted = parts;
  std::sort(sorted.begin(), sorted.end(), [](double a, double b) {
    if (std::fabs(a) != std::fabs(b)) return std::fabs(a) < std::fabs(b);
    return !std::signbit(a) && std::signbit(b);
  });
  double want = 0;
  for (double x : sorted) want += x;
  dot.val = 0.0;
  for (int b = n - 1; b >= 0; --b) dot.val += parts[static_cast<std::size_t>(b)];
  EXPECT_EQ(Bits(dot.val.OrderedSum()), Bits(want));
  tributary::parthenon_interop::SetOrderedTerms(false);
}

// Parthenon's thread pool adds partitions' partials from several threads at once: `+=` on
// the layer's `val` loses nothing, and ordered terms give the same bits every time.
TEST(ParthenonLayer, AdditionsFromSeveralThreadsLoseNothing) {
  constexpr int kThreads = 4, kTerms = 500;
  const auto parts = BlockPartials();
  tributary::parthenon_interop::TrackedValue<double> v;
  TrackedContainer<Pair> pair;
  std::set<std::uint64_t> ordered;
  for (int rep = 0; rep < 3; ++rep) {
    v = 0.0;
    pair = Pair();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int k = 0; k < kTerms; ++k) {
          v += parts[static_cast<std::size_t>((t * kTerms + k) % parts.size())];
          Pair p;
          p[0] = 1.0;
          p[1] = t;
          pair += p;
        }
      });
    for (auto& th : threads) th.join();
    tributary::ExactSum want;
    for (int i = 0; i < kThreads * kTerms; ++i)
      want.Add(parts[static_cast<std::size_t>(i % static_cast<int>(parts.size()))]);
    EXPECT_TRUE(v.Exact() && v.Sum().SameValue(want));
    EXPECT_EQ(pair[0], kThreads * kTerms);
    EXPECT_EQ(pair[1], kTerms * (kThreads * (kThreads - 1) / 2));
    ordered.insert(Bits(v.OrderedSum()));
  }
  EXPECT_EQ(ordered.size(), 1u);
}

TEST(ParthenonLayer, TrackedValueReadsLikeADouble) {
  parthenon::AllReduce<double> r;
  r.val = 2.0;
  r.val += 0.5;
  const double d = r.val;
  EXPECT_EQ(d, 2.5);
  EXPECT_EQ(std::sqrt(r.val / 2), std::sqrt(1.25));
  EXPECT_EQ(std::max(r.val, 3.0), 3.0);
  r.val *= 2;
  EXPECT_EQ(static_cast<double>(r.val), 5.0);
  EXPECT_FALSE(r.val.Exact());
  r.val = 1;
  EXPECT_TRUE(r.val.Exact());
}

}  // namespace
