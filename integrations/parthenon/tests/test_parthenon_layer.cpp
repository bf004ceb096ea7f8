// Parthenon's reduction types on Tributary (integrations/parthenon), used as Parthenon's
// solvers and examples use them, at 1-4 ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "mpi_test.hpp"
#include "parthenon_stand_in.hpp"

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
