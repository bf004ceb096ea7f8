// AllReduce / Reduce / AllGather over every supported value type and operator, at every
// rank count: results equal a serial reference and are bitwise identical on every rank.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <complex>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "mpi_test.hpp"
#include "reduction_test.hpp"
#include "test_types.hpp"
#include "tributary/tributary.hpp"
#if TRIBUTARY_HAVE_KOKKOS
#include "tributary/kokkos.hpp"  // Kokkos::View values
#endif

namespace {

using tributary::TaskStatus;
using tributary::testing::Rank;
using tributary::testing::Size;
using tributary::testing::Wait;

// Bytes of every rank's value, compared: identical on all ranks.
template <class T>
bool SameBitsEverywhere(const T& v) {
  std::string bytes(reinterpret_cast<const char*>(&v), sizeof(T));
  auto all = tributary::testing::AllGatherBytes(bytes);
  for (auto& b : all)
    if (b != all[0]) return false;
  return true;
}

bool SameBitsEverywhere(const std::vector<double>& v) {
  std::string bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
  auto all = tributary::testing::AllGatherBytes(bytes);
  for (auto& b : all)
    if (b != all[0]) return false;
  return true;
}

template <class T>
class ArithmeticAllReduce : public ::testing::Test {};
using ArithmeticTypes = ::testing::Types<int, long, unsigned, std::size_t, std::int8_t,
                                         std::uint16_t, float, double, long double>;
TYPED_TEST_SUITE(ArithmeticAllReduce, ArithmeticTypes);

TYPED_TEST(ArithmeticAllReduce, SumMinMaxProdMatchReference) {
  using T = TypeParam;
  tributary::Context ctx;
  tributary::AllReduce<T> r(ctx, "x");
  const int p = Size(), me = Rank();
  T sum_ref = 0, min_ref = T(100), max_ref = 0, prod_ref = 1;
  for (int q = 0; q < p; ++q) {
    sum_ref += T(q + 1);
    min_ref = std::min(min_ref, T(q + 2));
    max_ref = std::max(max_ref, T(q + 2));
    prod_ref *= T(q % 2 + 1);
  }
  r.val = T(me + 1);
  EXPECT_EQ(r.StartReduce(tributary::Sum{}), TaskStatus::complete);
  Wait(r);
  TRIBUTARY_EXPECT_ALL(r.val == sum_ref);
  r.val = T(me + 2);
  r.StartReduce(tributary::Min{});
  Wait(r);
  TRIBUTARY_EXPECT_ALL(r.val == min_ref);
  r.val = T(me + 2);
  r.StartReduce(tributary::Max{});
  Wait(r);
  TRIBUTARY_EXPECT_ALL(r.val == max_ref);
  r.val = T(me % 2 + 1);
  r.StartReduce(tributary::Prod{});
  Wait(r);
  TRIBUTARY_EXPECT_ALL(r.val == prod_ref);
  EXPECT_EQ(r.Generation(), 4u);
}

TEST(Values, FloatSumThatDependsOnOrderIsBitwiseIdenticalOnEveryRank) {
  tributary::Context ctx;
  tributary::AllReduce<double> r(ctx);
  // 1e16 + 1 + ... : the float result depends on the order of the additions.
  const double parts[] = {1e16, 1.0, -1e16, 3.14159, 1e-3, 2.5e15};
  r.val = parts[Rank() % 6] * (1.0 + 1e-13 * Rank());
  r.StartReduce(tributary::Sum{});
  Wait(r);
  TRIBUTARY_EXPECT_ALL(SameBitsEverywhere(r.val));
}

TEST(Values, LogicalAndBitwiseOperators) {
  tributary::Context ctx;
  const int me = Rank(), p = Size();
  tributary::AllReduce<bool> b(ctx);
  b.val = me != 1;
  b.StartReduce(tributary::LAnd{});
  Wait(b);
  TRIBUTARY_EXPECT_ALL(b.val == (p < 2));
  b.val = me == p - 1;
  b.StartReduce(tributary::LOr{});
  Wait(b);
  TRIBUTARY_EXPECT_ALL(b.val);
  tributary::AllReduce<unsigned> u(ctx);
  u.val = 1u << me;
  u.StartReduce(tributary::BOr{});
  Wait(u);
  TRIBUTARY_EXPECT_ALL(u.val == (1u << p) - 1);
  u.val = ~(1u << me);
  u.StartReduce(tributary::BAnd{});
  Wait(u);
  TRIBUTARY_EXPECT_ALL(u.val == ~((1u << p) - 1));
  u.val = 3u;
  u.StartReduce(tributary::BXor{});
  Wait(u);
  TRIBUTARY_EXPECT_ALL(u.val == (p % 2 ? 3u : 0u));
  tributary::AllReduce<int> x(ctx);
  x.val = 1;
  x.StartReduce(tributary::LXor{});
  Wait(x);
  TRIBUTARY_EXPECT_ALL(x.val == p % 2);
}

TEST(Values, ComplexArrayCArrayVector) {
  tributary::Context ctx;
  const int me = Rank(), p = Size();
  tributary::AllReduce<std::complex<double>> c(ctx);
  c.val = {1.0 * me, 2.0};
  c.StartReduce(tributary::Sum{});
  Wait(c);
  TRIBUTARY_EXPECT_ALL(c.val == std::complex<double>(p * (p - 1) / 2.0, 2.0 * p));

  tributary::AllReduce<std::array<long, 3>> a(ctx);
  a.val = {me, 1, -me};
  a.StartReduce(tributary::Max{});
  Wait(a);
  TRIBUTARY_EXPECT_ALL((a.val == std::array<long, 3>{p - 1, 1, 0}));

  tributary::AllReduce<int[4]> carr(ctx);
  for (int i = 0; i < 4; ++i) carr.val[i] = me * i;
  carr.StartReduce(tributary::Sum{});
  Wait(carr);
  bool ok = true;
  for (int i = 0; i < 4; ++i) ok = ok && carr.val[i] == i * p * (p - 1) / 2;
  TRIBUTARY_EXPECT_ALL(ok);

  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(1000)}) {
    tributary::AllReduce<std::vector<double>> v(ctx);
    v.val.assign(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) v.val[i] = 0.1 * static_cast<double>(i) + me;
    v.StartReduce(tributary::Sum{});
    Wait(v);
    bool vok = v.val.size() == n;
    for (std::size_t i = 0; vok && i < n; ++i)
      vok = std::abs(v.val[i] - (0.1 * static_cast<double>(i) * p + p * (p - 1) / 2.0)) < 1e-9;
    TRIBUTARY_EXPECT_ALL(vok);
    TRIBUTARY_EXPECT_ALL(SameBitsEverywhere(v.val));
  }
}

#if TRIBUTARY_HAVE_KOKKOS
TEST(Values, HostKokkosView) {
  tributary::Context ctx;
  tributary::AllReduce<Kokkos::View<double*, Kokkos::HostSpace>> v(ctx, "view");
  v.val = Kokkos::View<double*, Kokkos::HostSpace>("v", 5);
  for (int i = 0; i < 5; ++i) v.val(i) = i + Rank();
  v.StartReduce(tributary::Min{});
  Wait(v);
  bool ok = true;
  for (int i = 0; i < 5; ++i) ok = ok && v.val(i) == i;
  TRIBUTARY_EXPECT_ALL(ok);
}

// A View's storage given up to a failed MPI_Iallreduce that another rank never started
// (docs/reductions.md, "Lifetimes"): `val` is a new View of the same length and elements,
// the object goes at once, and the old storage, kept until the process ends, is left alone
// once Kokkos is finalised (an error of Kokkos's at exit otherwise).
TEST(Values, HostKokkosViewGivenUpToAFailedLibraryCollective) {
  if (Size() < 2) GTEST_SKIP() << "needs a rank that never starts";
  using View = Kokkos::View<double*, Kokkos::HostSpace>;
  std::vector<std::string> reported;
  tributary::ContextOptions options;
  options.debug = tributary::DebugLevel::none;  // the allreduce works in val's own storage
  options.watchdog = std::chrono::seconds(10);
  options.on_failure = tributary::FailurePolicy::propagate;
  options.error_handler = [&](const std::string& m) { reported.push_back(m); };
  options.allreduce_schedule = tributary::ScheduleKind::mpi_library;
  auto ctx = std::make_unique<tributary::Context>(options);
  auto v = std::make_unique<tributary::AllReduce<View>>(*ctx, "view");
  const bool starts = Rank() != Size() - 1;
  v->val = View("v", 1000);  // 8 KB: MPI_Iallreduce, not the persistent request
  for (int i = 0; i < 1000; ++i) v->val(i) = i;
  const View before = v->val;
  if (starts) v->StartReduce(tributary::Sum{});
  tributary::testing::Barrier();
  if (!starts) ctx->ReportFailure("injected: this rank starts nothing");
  bool failed = !starts;
  // Later polls settle it (a few, where MPI's tests answer "not yet").
  for (int polls = 0; starts && polls < 100000 && (polls == 0 || v->InFlight()); ++polls) {
    try {
      Wait(*v);
    } catch (const tributary::RemoteError&) {
      failed = true;
    }
  }
  TRIBUTARY_EXPECT_ALL(failed && !v->InFlight());
  TRIBUTARY_EXPECT_ALL(!starts || (v->val.data() != before.data() && v->val.extent(0) == 1000));
  v.reset();
  ctx.reset();
  TRIBUTARY_EXPECT_ALL(reported.empty());
}
#endif

TEST(Values, MinLocAndMaxLocLowestIndexWinsTies) {
  tributary::Context ctx;
  const int me = Rank(), p = Size();
  tributary::AllReduce<tributary::ValueLoc<double>> lo(ctx);
  // Every rank has the same value: the lowest global index must win.
  lo.val = {2.5, 1000 + 10 * (p - me)};
  lo.StartReduce(tributary::MinLoc{});
  Wait(lo);
  TRIBUTARY_EXPECT_ALL(lo.val.value == 2.5 && lo.val.index == 1010);
  tributary::AllReduce<tributary::ValueLoc<int>> hi(ctx);
  hi.val = {me % 2, std::int64_t(1) << 40 | (p - me)};
  hi.StartReduce(tributary::MaxLoc{});
  Wait(hi);
  const int expect_value = p > 1 ? 1 : 0;
  // Ranks with value 1 are the odd ones; the lowest index among them is the largest odd rank.
  const int best = p > 1 ? ((p - 1) % 2 ? p - 1 : p - 2) : 0;
  TRIBUTARY_EXPECT_ALL(hi.val.value == expect_value &&
                       hi.val.index == (std::int64_t(1) << 40 | (p - best)));
  tributary::AllReduce<tributary::MinMaxPair<float>> mm(ctx);
  mm.val = {float(me), float(me)};
  mm.StartReduce(tributary::MinMax{});
  Wait(mm);
  TRIBUTARY_EXPECT_ALL(mm.val.min == 0.f && mm.val.max == float(p - 1));
}

// 2x2 integer matrices: a non-commutative product.
using tributary::testing::Mat;
using tributary::testing::MatMul;
Mat RankMatrix(int r) { return r % 2 ? Mat{1, r, 0, 1} : Mat{1, 0, r + 1, 1}; }

TEST(Values, NonCommutativeUserOperatorKeepsRankOrder) {
  tributary::Context ctx;
  Mat expect = MatMul::identity();
  for (int q = 0; q < Size(); ++q) {
    Mat m = RankMatrix(q);
    Mat e = expect;
    MatMul{}(e, m);  // m = e * m
    expect = m;
  }
  tributary::AllReduce<Mat> m(ctx, "matrices");
  m.val = RankMatrix(Rank());
  m.StartReduce(MatMul{});
  Wait(m);
  TRIBUTARY_EXPECT_ALL(m.val == expect);
  // The same through Reduce to the last rank.
  tributary::Reduce<Mat> red(ctx);
  red.val = RankMatrix(Rank());
  red.StartReduce(Size() - 1, MatMul{});
  Wait(red);
  TRIBUTARY_EXPECT_ALL(Rank() == Size() - 1 ? red.val == expect : red.val == RankMatrix(Rank()));
}

TEST(Values, TupleWithOneOperatorPerElement) {
  tributary::Context ctx;
  tributary::AllReduce<std::tuple<double, long, int>> t(ctx);
  t.val = {1.5, long(Rank()), Rank() + 7};
  t.StartReduce(tributary::Each(tributary::Sum{}, tributary::Max{}, tributary::Min{}));
  Wait(t);
  TRIBUTARY_EXPECT_ALL(std::get<0>(t.val) == 1.5 * Size() && std::get<1>(t.val) == Size() - 1 &&
                       std::get<2>(t.val) == 7);
}

TEST(Values, LambdaOperatorAndPlainMpiOp) {
  tributary::Context ctx;
  auto absmax = tributary::MakeOp<tributary::Commutes::yes>(
      [](const double& in, double& inout) { inout = std::max(std::abs(in), std::abs(inout)); },
      0.0);
  tributary::AllReduce<double> r(ctx);
  r.val = Rank() % 2 ? -3.0 * Rank() : 1.0;
  r.StartReduce(absmax);
  Wait(r);
  const int last_odd = Size() > 1 ? ((Size() - 1) % 2 ? Size() - 1 : Size() - 2) : 0;
  TRIBUTARY_EXPECT_ALL(r.val == (Size() > 1 ? 3.0 * last_odd : 1.0));
#if TRIBUTARY_HAVE_MPI
  r.val = 2.0;
  r.StartReduce(MPI_SUM);
  Wait(r);
  TRIBUTARY_EXPECT_ALL(r.val == 2.0 * Size());
#endif
}

#if TRIBUTARY_HAVE_MPI
// A user-created MPI_Op sees the C type's own datatype (MPI_INT for int, not MPI_INT32_T),
// whichever schedule combines: the function checks it and fails the reduction otherwise.
MPI_Datatype g_expected_type = MPI_DATATYPE_NULL;
int g_wrong_types = 0;

template <class T>
void SumIfExpected(void* in, void* inout, int* len, MPI_Datatype* type) {
  if (*type != g_expected_type) ++g_wrong_types;
  for (int k = 0; k < *len; ++k) static_cast<T*>(inout)[k] += static_cast<const T*>(in)[k];
}

template <class T>
void ExpectUserOpSees(MPI_Datatype expected, const char* name) {
  MPI_Op op;
  MPI_Op_create(&SumIfExpected<T>, 1, &op);
  g_expected_type = expected;
  g_wrong_types = 0;
  tributary::Context ctx;
  tributary::AllReduce<T> r(ctx, name);
  r.val = static_cast<T>(Rank() + 1);
  r.StartReduce(op);
  Wait(r);
  tributary::Reduce<std::vector<T>> v(ctx, name);
  v.val.assign(3, static_cast<T>(1));
  v.StartReduce(0, op);
  Wait(v);
  MPI_Op_free(&op);
  const int p = Size();
  SCOPED_TRACE(name);
  TRIBUTARY_EXPECT_ALL(g_wrong_types == 0);  // the MPI_Op saw another datatype
  TRIBUTARY_EXPECT_ALL(r.val == static_cast<T>(p * (p + 1) / 2));
  TRIBUTARY_EXPECT_ALL(Rank() != 0 || v.val == std::vector<T>(3, static_cast<T>(p)));
}

TEST(Values, UserMpiOpSeesTheCTypesOwnDatatype) {
  ExpectUserOpSees<int>(MPI_INT, "int");
  ExpectUserOpSees<unsigned>(MPI_UNSIGNED, "unsigned");
  ExpectUserOpSees<short>(MPI_SHORT, "short");
  ExpectUserOpSees<long>(MPI_LONG, "long");
  ExpectUserOpSees<unsigned long>(MPI_UNSIGNED_LONG, "unsigned long");
  ExpectUserOpSees<long long>(MPI_LONG_LONG, "long long");
  ExpectUserOpSees<signed char>(MPI_SIGNED_CHAR, "signed char");
  ExpectUserOpSees<char>(std::is_signed_v<char> ? MPI_INT8_T : MPI_UINT8_T, "char");
}
#endif

TEST(Values, ReduceLeavesOtherRanksUnchanged) {
  tributary::Context ctx;
  for (int root = 0; root < Size(); ++root) {
    tributary::Reduce<std::vector<int>> r(ctx);
    r.val = {Rank(), 1};
    r.StartReduce(root, tributary::Sum{});
    Wait(r);
    if (Rank() == root)
      TRIBUTARY_EXPECT_ALL((r.val == std::vector<int>{Size() * (Size() - 1) / 2, Size()}));
    else
      TRIBUTARY_EXPECT_ALL((r.val == std::vector<int>{Rank(), 1}));
  }
}

// Values the object cannot give up to a failed collective (stored inline, a reduce's
// separate input) run on a copy of the MPI library's schedule above 4 KiB: the results
// are the same, at every root, and the input and the other ranks' values stay unchanged.
TEST(Values, InlineValuesAndInputsOnTheLibrarysCopy) {
  tributary::ContextOptions options;
  options.allreduce_schedule = tributary::ScheduleKind::mpi_library;
  options.reduce_schedule = tributary::ScheduleKind::mpi_library;
  options.communicator_pool = 2;  // a lane for each object
  tributary::Context ctx(options);
  using Fixed = std::array<double, 700>;  // 5600 B
  const int p = Size();
  tributary::AllReduce<Fixed> a(ctx, "inline");
  tributary::Reduce<Fixed> r(ctx, "inline to a root");
  for (int generation = 0; generation < 3; ++generation) {
    for (std::size_t i = 0; i < a.val.size(); ++i) a.val[i] = i + Rank() + generation;
    a.StartReduce(tributary::Sum{});
    Wait(a);
    bool ok = p == 1 || a.ScheduleUsed() == tributary::ScheduleKind::mpi_library;
    for (std::size_t i = 0; i < a.val.size(); ++i)
      ok = ok && a.val[i] == double(i * p) + p * (p - 1) / 2.0 + double(generation * p);
    TRIBUTARY_EXPECT_ALL(ok);
  }
  for (int root = 0; root < p; ++root) {
    Fixed input;
    for (std::size_t i = 0; i < input.size(); ++i) input[i] = 2.0 * i + Rank();
    const Fixed kept = input;
    r.val.fill(-1.0);
    r.StartReduce(root, tributary::Sum{}, input);
    Wait(r);
    bool ok = input == kept && (p == 1 || r.ScheduleUsed() == tributary::ScheduleKind::mpi_library);
    for (std::size_t i = 0; i < r.val.size(); ++i)
      ok = ok && r.val[i] == (Rank() == root ? 2.0 * i * p + p * (p - 1) / 2.0 : -1.0);
    TRIBUTARY_EXPECT_ALL(ok);
  }
}

TEST(Values, AllGatherInRankOrder) {
  tributary::Context ctx;
  tributary::AllGather<std::array<int, 2>> g(ctx);
  g.local = {Rank(), Rank() * Rank()};
  g.StartReduce();
  Wait(g);
  bool ok = static_cast<int>(g.val.size()) == Size();
  for (int q = 0; ok && q < Size(); ++q) ok = g.val[q][0] == q && g.val[q][1] == q * q;
  TRIBUTARY_EXPECT_ALL(ok);
  tributary::AllGather<std::vector<double>> gv(ctx);
  gv.local = {1.0 * Rank(), 2.0};
  gv.StartReduce();
  Wait(gv);
  ok = static_cast<int>(gv.val.size()) == Size();
  for (int q = 0; ok && q < Size(); ++q) ok = gv.val[q] == std::vector<double>{1.0 * q, 2.0};
  TRIBUTARY_EXPECT_ALL(ok);
}

}  // namespace
