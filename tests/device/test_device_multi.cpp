// Several sums from one kernel: ContributeKernel for values of K elements (std::array, a C
// array, a contiguous container written on the pattern of Parthenon's summable arrays) over
// every policy it takes, the functor accumulating all K in one pass (into the value type,
// into E (&acc)[K], into tributary::ExactSums<K>) or giving them; ExactSumReducer over
// ExactSums<K> in a user's own parallel_reduce; batch members of K elements. In fast mode
// the data are integers (exact in any order), compared with a host reference; in
// rank_count_independent every element must carry the bits of its exact sum whatever the
// split into ranks and lists, at 1-4 ranks.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "device_data.hpp"
#include "mpi_test.hpp"
#include "reduction_test.hpp"
#include "summable.hpp"
#include "tributary/kokkos.hpp"

namespace {

using tributary::AllReduce;
using tributary::ExactSum;
using tributary::ExactSumReducer;
using tributary::ExactSums;
using tributary::testing::ListsOn;
using tributary::testing::Rank;
using tributary::testing::SameBitsEverywhere;
using tributary::testing::Size;
using tributary::testing::SummableArray;
using tributary::testing::Wait;

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Team = Kokkos::TeamPolicy<Exec>::member_type;
template <int N>
using MD = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<N>>;
using Pair = SummableArray<double, 2>;
using Data = Kokkos::View<double**, Kokkos::LayoutRight, Mem>;  // (row, column): x and y

// nvcc compiles std::array's members for the host only (unless Kokkos enables relaxed
// constexpr): kernels index a std::array accumulator only where the backend allows it.
#if defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_CUDA_CONSTEXPR)
constexpr bool kStdArrayInKernels = false;
#else
constexpr bool kStdArrayInKernels = true;
#endif

constexpr int kRows = 6, kCols = 35;  // a list's data: rows x columns of x and y

// Integer data (exact in any order of additions): x and y of list l on rank r.
double IntX(int r, int l, int i) { return static_cast<double>(tributary::testing::IntAt(r, l, i)); }
double IntY(int r, int l, int i) {
  return static_cast<double>(tributary::testing::IntAt(r + 7, l + 3, i) % 97);
}

// x and y of one list in device memory, laid out (i / kCols, i % kCols) for rank-2 and
// higher policies; `x` and `y` give the values by global index.
template <class X, class Y>
std::pair<Data, Data> MakeData(int n, const X& x, const Y& y) {
  Data dx("x", kRows, n / kRows), dy("y", kRows, n / kRows);
  auto hx = Kokkos::create_mirror_view(dx);
  auto hy = Kokkos::create_mirror_view(dy);
  for (int i = 0; i < n; ++i) {
    hx(i / (n / kRows), i % (n / kRows)) = x(i);
    hy(i / (n / kRows), i % (n / kRows)) = y(i);
  }
  Kokkos::deep_copy(dx, hx);
  Kokkos::deep_copy(dy, hy);
  return {dx, dy};
}

// The two sums of one pass: x.y and x.x.
struct TwoDots {
  Data x, y;
  KOKKOS_INLINE_FUNCTION double Xy(int a, int b) const { return x(a, b) * y(a, b); }
  KOKKOS_INLINE_FUNCTION double Xx(int a, int b) const { return x(a, b) * x(a, b); }
  // The flat index i over the list's data, for the other ranks of policy.
  KOKKOS_INLINE_FUNCTION int Row(std::int64_t i) const {
    return static_cast<int>(i / static_cast<std::int64_t>(x.extent(1)));
  }
  KOKKOS_INLINE_FUNCTION int Col(std::int64_t i) const {
    return static_cast<int>(i % static_cast<std::int64_t>(x.extent(1)));
  }
};

// The integer case: this rank's lists (ListsOn: none on rank 2) and both sums over every
// list of every rank, for a comparison with ==.
struct IntCase {
  std::vector<TwoDots> lists;
  double want[2] = {0, 0};
  int all_lists = 0;
};
IntCase MakeIntCase() {
  IntCase c;
  const int n = kRows * kCols;
  for (int r = 0; r < Size(); ++r)
    for (int l = 0; l < ListsOn(r); ++l, ++c.all_lists)
      for (int i = 0; i < n; ++i) {
        c.want[0] += IntX(r, l, i) * IntY(r, l, i);
        c.want[1] += IntX(r, l, i) * IntX(r, l, i);
      }
  for (int l = 0; l < ListsOn(Rank()); ++l) {
    auto [x, y] = MakeData(
        n, [&](int i) { return IntX(Rank(), l, i); }, [&](int i) { return IntY(Rank(), l, i); });
    c.lists.push_back({x, y});
  }
  return c;
}

// Accumulating into whatever the value offers: the value type (a summable array, a
// std::array), E (&acc)[2], ExactSums<2> or ExactSum (&acc)[2]; one functor for every mode.
struct Accumulate2D {
  TwoDots d;
  template <class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(int a, int b, Acc& acc) const {
    acc[0] += d.Xy(a, b);
    acc[1] += d.Xx(a, b);
  }
};
struct AccumulateRange {
  TwoDots d;
  template <class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Acc& acc) const {
    acc[0] += d.Xy(d.Row(i), d.Col(i));
    acc[1] += d.Xx(d.Row(i), d.Col(i));
  }
};
// Rank 3 to 6: (row, column split in 5 x 7) and extents of one.
struct Accumulate3D {
  TwoDots d;
  template <class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(int a, int b, int c, Acc& acc) const {
    acc[0] += d.Xy(a, b * 7 + c);
    acc[1] += d.Xx(a, b * 7 + c);
  }
};
struct Accumulate4D {
  TwoDots d;
  template <class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(int a, int b, int c, int, Acc& acc) const {
    acc[0] += d.Xy(a, b * 7 + c);
    acc[1] += d.Xx(a, b * 7 + c);
  }
};
struct Accumulate5D {
  TwoDots d;
  template <class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(int a, int b, int c, int, int, Acc& acc) const {
    acc[0] += d.Xy(a, b * 7 + c);
    acc[1] += d.Xx(a, b * 7 + c);
  }
};
struct Accumulate6D {
  TwoDots d;
  template <class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(int a, int b, int c, int, int, int, Acc& acc) const {
    acc[0] += d.Xy(a, b * 7 + c);
    acc[1] += d.Xx(a, b * 7 + c);
  }
};
// A team per row: each thread accumulates its columns (Kokkos joins every thread's value).
struct AccumulateTeam {
  TwoDots d;
  template <class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(const Team& m, Acc& acc) const {
    const int a = m.league_rank();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, static_cast<int>(d.x.extent(1))), [&](int b) {
      acc[0] += d.Xy(a, b);
      acc[1] += d.Xx(a, b);
    });
  }
};
// Giving the values: a std::array per cell, or a team's pair from a nested reduction with
// Kokkos::Sum over the summable array (its reduction_identity).
struct Give2D {
  TwoDots d;
  KOKKOS_INLINE_FUNCTION std::array<double, 2> operator()(int a, int b) const {
    return {d.Xy(a, b), d.Xx(a, b)};
  }
};
struct GiveTeamPair {
  TwoDots d;
  KOKKOS_INLINE_FUNCTION Pair operator()(const Team& m) const {
    const int a = m.league_rank();
    const int cols = static_cast<int>(d.x.extent(1));
    Pair team;
#if KOKKOS_VERSION >= 30700
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(m, cols),
        [&](int b, Pair& p) {
          p[0] += d.Xy(a, b);
          p[1] += d.Xx(a, b);
        },
        Kokkos::Sum<Pair>(team));
#else  // Kokkos::Sum joins through volatile references, which the pattern's += does not take
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(m, cols), [&](int b, double& s) { s += d.Xy(a, b); }, team[0]);
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(m, cols), [&](int b, double& s) { s += d.Xx(a, b); }, team[1]);
#endif
    return team;
  }
};

enum class Form { range, md2, md3, md4, md5, md6, team, give_md2, give_team };
constexpr int kForms = 9;
const char* Name(Form f) {
  static const char* names[] = {"RangePolicy",    "rank-2 MDRange",       "rank-3 MDRange",
                                "rank-4 MDRange", "rank-5 MDRange",       "rank-6 MDRange",
                                "TeamPolicy",     "rank-2 giving values", "team giving a pair"};
  return names[static_cast<int>(f)];
}

constexpr bool Gives(Form f) { return f == Form::give_md2 || f == Form::give_team; }

// The forms that give their values (the accumulator is Tributary's alone).
template <class R>
void ContributeGiving(R& r, Form form, int l, const TwoDots& d) {
  const int rows = static_cast<int>(d.x.extent(0)), cols = static_cast<int>(d.x.extent(1));
  if (form == Form::give_md2)
    r.ContributeKernel(l, MD<2>(Exec(), {0, 0}, {rows, cols}), Give2D{d}, tributary::Sum{});
  else
    r.ContributeKernel(l, Kokkos::TeamPolicy<Exec>(Exec(), rows, Kokkos::AUTO), GiveTeamPair{d},
                       tributary::Sum{});
}

// List l contributes the two sums of its data to `r` (an AllReduce or a batch member) in
// form `form`.
template <class R>
void Contribute(R& r, Form form, int l, const TwoDots& d) {
  const int rows = static_cast<int>(d.x.extent(0)), cols = static_cast<int>(d.x.extent(1));
  const tributary::Sum sum;
  switch (form) {
    case Form::range:
      r.ContributeKernel(l, Kokkos::RangePolicy<Exec>(Exec(), 0, std::int64_t{rows} * cols),
                         AccumulateRange{d}, sum);
      break;
    case Form::md2:
      r.ContributeKernel(l, MD<2>(Exec(), {0, 0}, {rows, cols}), Accumulate2D{d}, sum);
      break;
    case Form::md3:
      r.ContributeKernel(l, MD<3>(Exec(), {0, 0, 0}, {rows, cols / 7, 7}), Accumulate3D{d}, sum);
      break;
    case Form::md4:  // rank 4 to 6: trailing extents of one
      r.ContributeKernel(l, MD<4>(Exec(), {0, 0, 0, 0}, {rows, cols / 7, 7, 1}), Accumulate4D{d},
                         sum);
      break;
    case Form::md5:
      r.ContributeKernel(l, MD<5>(Exec(), {0, 0, 0, 0, 0}, {rows, cols / 7, 7, 1, 1}),
                         Accumulate5D{d}, sum);
      break;
    case Form::md6:
      r.ContributeKernel(l, MD<6>(Exec(), {0, 0, 0, 0, 0, 0}, {rows, cols / 7, 7, 1, 1, 1}),
                         Accumulate6D{d}, sum);
      break;
    case Form::team:
      r.ContributeKernel(l, Kokkos::TeamPolicy<Exec>(Exec(), rows, Kokkos::AUTO), AccumulateTeam{d},
                         sum);
      break;
    case Form::give_md2:
    case Form::give_team:
      ContributeGiving(r, form, l, d);
      break;
  }
}

// The element c of a value of any of the three kinds.
template <class T>
double At(const T& v, int c) {
  return tributary::ValueTraits<T>::Data(v)[c];
}

std::uint64_t Bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// Fast mode: every form, lists per rank as ListsOn (rank 2 has none), against the host.
template <class T>
struct IsStdArray : std::false_type {};
template <class E, std::size_t N>
struct IsStdArray<std::array<E, N>> : std::true_type {};

template <class T>
void FastFormsMatchTheHost() {
  // A std::array accumulator is indexed in the kernel, which nvcc does not compile without
  // relaxed constexpr: there the std::array value takes the forms that give their values.
  constexpr bool accumulate = !IsStdArray<T>::value || kStdArrayInKernels;
  tributary::Context ctx;
  AllReduce<T> dots(ctx, "dots");
  const IntCase c = MakeIntCase();
  const auto& lists = c.lists;
  const double* want = c.want;
  for (int f = 0; f < kForms; ++f) {
    const Form form = static_cast<Form>(f);
    if (!accumulate && !Gives(form)) continue;
    dots.Expect(ListsOn(Rank()), tributary::Sum{});
    for (int l = ListsOn(Rank()) - 1; l >= 0; --l) {
      if constexpr (accumulate)
        Contribute(dots, form, l, lists[static_cast<std::size_t>(l)]);
      else
        ContributeGiving(dots, form, l, lists[static_cast<std::size_t>(l)]);
    }
    Wait(ctx, dots);
    TRIBUTARY_EXPECT_ALL(At(dots.val, 0) == want[0] && At(dots.val, 1) == want[1]);
    if (At(dots.val, 0) != want[0] || At(dots.val, 1) != want[1])
      ADD_FAILURE() << Name(form) << ": " << At(dots.val, 0) << ", " << At(dots.val, 1);
  }
}

}  // namespace

TEST(MultiKernels, SummableArrayTakesTwoSumsFromOnePassOverEveryPolicy) {
  FastFormsMatchTheHost<Pair>();
}
TEST(MultiKernels, StdArrayAndCArrayToo) {
  FastFormsMatchTheHost<std::array<double, 2>>();
  FastFormsMatchTheHost<double[2]>();
}

namespace {

// The same in a KOKKOS_LAMBDA, as an application writes it: one pass, two sums.
void ContributeFromLambda(AllReduce<Pair>& dots, int l, const TwoDots& d) {
  const int rows = static_cast<int>(d.x.extent(0)), cols = static_cast<int>(d.x.extent(1));
  dots.ContributeKernel(
      l, MD<2>(Exec(), {0, 0}, {rows, cols}),
      KOKKOS_LAMBDA(const int a, const int b, Pair& acc) {
        acc[0] += d.Xy(a, b);
        acc[1] += d.Xx(a, b);
      },
      tributary::Sum{});
}

// Exact sums from KOKKOS_LAMBDAs (closures, which have no default constructor): K sums
// over an MDRange into ExactSums<2>, and one sum over a RangePolicy into an ExactSum.
void ContributeExactFromLambdas(AllReduce<Pair>& dots, AllReduce<double>& xy, int l,
                                const TwoDots& d) {
  const int rows = static_cast<int>(d.x.extent(0)), cols = static_cast<int>(d.x.extent(1));
  dots.ContributeKernel(
      l, MD<2>(Exec(), {0, 0}, {rows, cols}),
      KOKKOS_LAMBDA(const int a, const int b, ExactSums<2>& acc) {
        acc[0] += d.Xy(a, b);
        acc[1] += d.Xx(a, b);
      },
      tributary::Sum{});
  xy.ContributeKernel(
      l, Kokkos::RangePolicy<Exec>(Exec(), 0, rows * cols),
      KOKKOS_LAMBDA(const int i, tributary::ExactSum& acc) { acc += d.Xy(i / cols, i % cols); },
      tributary::Sum{});
}

}  // namespace

TEST(MultiKernels, ExactSumsFromLambdas) {
  tributary::ContextOptions o;
  o.determinism = tributary::Determinism::rank_count_independent;
  tributary::Context ctx(o);
  AllReduce<Pair> dots(ctx, "dots");
  AllReduce<double> xy(ctx, "xy");
  const IntCase c = MakeIntCase();
  dots.Expect(ListsOn(Rank()), tributary::Sum{});
  xy.Expect(ListsOn(Rank()), tributary::Sum{});
  for (int l = 0; l < ListsOn(Rank()); ++l)
    ContributeExactFromLambdas(dots, xy, l, c.lists[static_cast<std::size_t>(l)]);
  Wait(ctx, dots);
  Wait(ctx, xy);
  TRIBUTARY_EXPECT_ALL(dots.val[0] == c.want[0] && dots.val[1] == c.want[1] && xy.val == c.want[0]);
}

TEST(MultiKernels, KokkosLambdaAccumulatingIntoTheSummableArray) {
  tributary::Context ctx;
  AllReduce<Pair> dots(ctx, "dots");
  const IntCase c = MakeIntCase();
  dots.Expect(ListsOn(Rank()), tributary::Sum{});
  for (int l = 0; l < ListsOn(Rank()); ++l)
    ContributeFromLambda(dots, l, c.lists[static_cast<std::size_t>(l)]);
  Wait(ctx, dots);
  TRIBUTARY_EXPECT_ALL(dots.val[0] == c.want[0] && dots.val[1] == c.want[1]);
}

// Reduce: the root receives both sums; the other ranks' val stays as it was.
TEST(MultiKernels, ReduceOfAPairToTheLastRank) {
  tributary::Context ctx;
  tributary::Reduce<Pair> dots(ctx, "dots to the last rank");
  const IntCase c = MakeIntCase();
  const int root = Size() - 1;
  dots.val[0] = -1.0;
  dots.val[1] = -2.0;
  dots.Expect(ListsOn(Rank()), root, tributary::Sum{});
  for (int l = 0; l < ListsOn(Rank()); ++l)
    Contribute(dots, Form::md2, l, c.lists[static_cast<std::size_t>(l)]);
  Wait(ctx, dots);
  const bool ok = Rank() == root ? dots.val[0] == c.want[0] && dots.val[1] == c.want[1]
                                 : dots.val[0] == -1.0 && dots.val[1] == -2.0;
  TRIBUTARY_EXPECT_ALL(ok);
}

namespace {

// Rounding-prone data for the exact mode: a quarter of the values large (up to 2^40) and
// cancelling between list-halves of the global blocks, the rest small of both signs.
constexpr int kBlocks = 12;
double Wild(int f, int block, int i) {
  const std::uint64_t h = (static_cast<std::uint64_t>(block % (kBlocks / 2)) * 100003u +
                           static_cast<std::uint64_t>(i)) *
                          0x9E3779B97F4A7C15ull;
  if ((h >> 20) % 4 == 0) {
    if (f == 1) return 1.0;
    const double mant = static_cast<double>((h >> 11) | 1) / 9007199254740992.0;
    return (block < kBlocks / 2 ? 1.0 : -1.0) * std::ldexp(mant, 30 + static_cast<int>(h % 11));
  }
  const std::uint64_t g =
      (static_cast<std::uint64_t>(f * 64 + block) * 7919u + i + 5) * 0xBF58476D1CE4E5B9ull;
  const double mant = static_cast<double>((g >> 11) | 1) / 9007199254740992.0;
  return ((g & 1) ? -1.0 : 1.0) * std::ldexp(mant, static_cast<int>((g >> 3) % 19) - 9);
}

// The blocks of each list of this rank: blocks dealt to the ranks in contiguous ranges,
// each rank's cut into lists of `per_list` blocks.
std::vector<std::vector<int>> ListsOfBlocks(int per_list) {
  const int first = kBlocks * Rank() / Size(), last = kBlocks * (Rank() + 1) / Size();
  std::vector<std::vector<int>> lists;
  for (int b = first; b < last; b += per_list) {
    lists.emplace_back();
    for (int k = b; k < last && k < b + per_list; ++k) lists.back().push_back(k);
  }
  return lists;
}

// A list's data: its blocks one after the other (kCols values per row, kRows rows each).
TwoDots ExactData(const std::vector<int>& blocks) {
  const int per = kRows * kCols;
  const int n = static_cast<int>(blocks.size()) * per;
  auto [x, y] = MakeData(
      n, [&](int i) { return Wild(0, blocks[static_cast<std::size_t>(i / per)], i % per); },
      [&](int i) { return Wild(1, blocks[static_cast<std::size_t>(i / per)], i % per); });
  return {x, y};
}

// A team per row giving its two exact sums (nested ExactSumReducer over ExactSums<2>).
struct GiveTeamSums {
  TwoDots d;
  KOKKOS_INLINE_FUNCTION ExactSums<2> operator()(const Team& m) const {
    const int a = m.league_rank();
    ExactSums<2> row;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(m, static_cast<int>(d.x.extent(1))),
        [&](int b, ExactSums<2>& s) {
          s[0] += d.Xy(a, b);
          s[1] += d.Xx(a, b);
        },
        ExactSumReducer<Kokkos::HostSpace, ExactSums<2>>(row));
    return row;
  }
};

// A functor of a user's own parallel_reduce (Kokkos 3.4 reads the value type from a
// functor's operator(), which must then be no template).
struct ExactPair {
  TwoDots d;
  KOKKOS_INLINE_FUNCTION void operator()(int a, int b, ExactSums<2>& acc) const {
    acc[0] += d.Xy(a, b);
    acc[1] += d.Xx(a, b);
  }
};

// A user's own parallel_reduce of two sums per list into ExactSums<2>, in host memory and
// in device memory, and per row into a View of ExactSums<2> (merged when contributed).
struct RowSums {
  TwoDots d;
  Kokkos::View<ExactSums<2>*, Mem> out;
  KOKKOS_INLINE_FUNCTION void operator()(const Team& m) const {
    const ExactSums<2> row = GiveTeamSums{d}(m);
    Kokkos::single(Kokkos::PerTeam(m), [&]() { out(m.league_rank()) = row; });
  }
};

}  // namespace

// rank_count_independent: each element is the exact sum of its products, bit for bit,
// whatever the lists and ranks, for every kind of value and every form of kernel.
TEST(MultiKernels, ExactPerElementWhateverTheSplit) {
  tributary::ContextOptions o;
  o.determinism = tributary::Determinism::rank_count_independent;
  tributary::Context ctx(o);
  ExactSum exact[2];
  double rounded[2] = {0, 0};
  for (int b = 0; b < kBlocks; ++b)
    for (int i = 0; i < kRows * kCols; ++i) {
      const double xy = Wild(0, b, i) * Wild(1, b, i), xx = Wild(0, b, i) * Wild(0, b, i);
      exact[0] += xy;
      exact[1] += xx;
      rounded[0] += xy;
      rounded[1] += xx;
    }
  const double want[2] = {exact[0].Round(), exact[1].Round()};
  ASSERT_NE(Bits(rounded[0]), Bits(want[0])) << "the data should show the order in the bits";
  AllReduce<Pair> pair(ctx, "pair");
  AllReduce<double[2]> carray(ctx, "C array");
  AllReduce<std::array<double, 2>> array(ctx, "std::array");
  std::vector<double> got;
  for (int per_list : {1, 2, 5}) {
    const auto blocks = ListsOfBlocks(per_list);
    std::vector<TwoDots> lists;
    for (const auto& b : blocks) lists.push_back(ExactData(b));
    const int n = static_cast<int>(lists.size());
    auto check = [&](const char* what, double v0, double v1) {
      got.push_back(v0);
      got.push_back(v1);
      if (Bits(v0) != Bits(want[0]) || Bits(v1) != Bits(want[1]))
        ADD_FAILURE() << what << ", " << per_list << " block(s) per list: " << v0 << ", " << v1
                      << " vs " << want[0] << ", " << want[1];
    };
    for (int f = 0; f < kForms; ++f) {
      const Form form = static_cast<Form>(f);
      pair.Expect(n, tributary::Sum{});
      carray.Expect(n, tributary::Sum{});
      for (int l = 0; l < n; ++l) {
        const TwoDots& d = lists[static_cast<std::size_t>(l)];
        if (form == Form::give_team) {  // a team's pair rounded in the team would not be exact
          const Kokkos::TeamPolicy<Exec> teams(Exec(), static_cast<int>(d.x.extent(0)),
                                               Kokkos::AUTO);
          pair.ContributeKernel(l, teams, GiveTeamSums{d}, tributary::Sum{});
          carray.ContributeKernel(l, teams, GiveTeamSums{d}, tributary::Sum{});
          continue;
        }
        Contribute(pair, form, l, d);
        Contribute(carray, form, l, d);
      }
      Wait(ctx, pair);
      Wait(ctx, carray);
      check(Name(form), pair.val[0], pair.val[1]);
      check(Name(form), carray.val[0], carray.val[1]);
    }
    // ExactSumReducer over ExactSums<2>: into host memory (Contribute), into device memory
    // and per row (ContributeView, merged on the device).
    std::vector<Kokkos::View<ExactSums<2>, Mem>> keep;
    std::vector<Kokkos::View<ExactSums<2>*, Mem>> keep_rows;
    for (int way = 0; way < 3; ++way) {
      array.Expect(n, tributary::Sum{});
      for (int l = 0; l < n; ++l) {
        const TwoDots& d = lists[static_cast<std::size_t>(l)];
        const auto policy = MD<2>(
            Exec(), {0, 0}, {static_cast<int>(d.x.extent(0)), static_cast<int>(d.x.extent(1))});
        if (way == 0) {
          ExactSums<2> sums;
          Kokkos::parallel_reduce(policy, ExactPair{d}, ExactSumReducer(sums));
          array.Contribute(l, sums);
        } else if (way == 1) {
          Kokkos::View<ExactSums<2>, Mem> sums("sums");
          keep.push_back(sums);
          Kokkos::parallel_reduce(policy, ExactPair{d}, ExactSumReducer(sums));
          array.ContributeView(l, Exec(), sums, tributary::Sum{});
        } else {
          Kokkos::View<ExactSums<2>*, Mem> rows("rows", d.x.extent(0));
          keep_rows.push_back(rows);
          Kokkos::parallel_for(
              Kokkos::TeamPolicy<Exec>(Exec(), static_cast<int>(d.x.extent(0)), Kokkos::AUTO),
              RowSums{d, rows});
          array.ContributeView(l, Exec(), rows, tributary::Sum{});
        }
      }
      Wait(ctx, array);
      check(way == 0   ? "ExactSumReducer into host memory"
            : way == 1 ? "ExactSumReducer into device memory"
                       : "per-row ExactSums in a View",
            array.val[0], array.val[1]);
    }
  }
  EXPECT_TRUE(SameBitsEverywhere(got));
}

namespace {

struct RoundedPair {
  TwoDots d;
  KOKKOS_INLINE_FUNCTION void operator()(int a, int b, double (&acc)[2]) const {
    acc[0] += d.Xy(a, b);
    acc[1] += d.Xx(a, b);
  }
};
// Holds a length beside its elements: no kernel can reduce into it as it is.
struct Counted {
  using value_type = double;
  int n = 2;
  double d[2] = {};
  KOKKOS_INLINE_FUNCTION double* data() { return d; }
  KOKKOS_INLINE_FUNCTION int size() const { return n; }
  KOKKOS_INLINE_FUNCTION double& operator[](int i) { return d[i]; }
};

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const tributary::UsageError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

// A functor that rounds as it accumulates cannot serve the exact mode, nor ExactSums the
// fast one; a container that does not consist of its elements cannot hold a kernel's
// result. Each refusal names the way out, and the generation still completes.
TEST(MultiKernels, FormsThatCannotServeAreClearErrors) {
  auto [x, y] = MakeData(
      kRows * kCols, [](int i) { return 0.5 * (i % 4); }, [](int) { return 2.0; });
  const TwoDots d{x, y};
  const auto policy = MD<2>(Exec(), {0, 0}, {kRows, kCols});
  double xy = 0;
  for (int i = 0; i < kRows * kCols; ++i) xy += 0.5 * (i % 4) * 2.0 * Size();
  {
    tributary::ContextOptions o;
    o.determinism = tributary::Determinism::rank_count_independent;
    tributary::Context ctx(o);
    AllReduce<Pair> r(ctx, "exact");
    r.Expect(1, tributary::Sum{});
    const std::string e =
        ErrorOf([&] { r.ContributeKernel(0, policy, RoundedPair{d}, tributary::Sum{}); });
    EXPECT_NE(e.find("tributary::ExactSums<2>&"), std::string::npos) << e;
    r.ContributeKernel(0, policy, ExactPair{d}, tributary::Sum{});
    Wait(ctx, r);
    TRIBUTARY_EXPECT_ALL(r.val[0] == xy);
  }
  tributary::Context ctx;
  AllReduce<Pair> r(ctx, "fast");
  r.Expect(1, tributary::Sum{});
  std::string e = ErrorOf([&] { r.ContributeKernel(0, policy, ExactPair{d}, tributary::Sum{}); });
  EXPECT_NE(e.find("needs Determinism::rank_count_independent"), std::string::npos) << e;
  Kokkos::View<ExactSums<2>, Mem> sums("sums");
  e = ErrorOf([&] { r.ContributeView(0, Exec(), sums, tributary::Sum{}); });
  EXPECT_NE(e.find("need Determinism::rank_count_independent"), std::string::npos) << e;
  r.ContributeKernel(0, policy, RoundedPair{d}, tributary::Sum{});
  Wait(ctx, r);
  TRIBUTARY_EXPECT_ALL(r.val[0] == xy);

  AllReduce<Counted> counted(ctx, "counted");
  counted.Expect(1, tributary::Sum{});
  e = ErrorOf([&] { counted.ContributeKernel(0, policy, Accumulate2D{d}, tributary::Sum{}); });
  EXPECT_NE(e.find("does not consist of its 2 element(s)"), std::string::npos) << e;
  counted.Contribute(0, Counted{});
  Wait(ctx, counted);
}

// A batch member of two elements takes both from one kernel, on the device, beside a
// member contributed on the host.
TEST(MultiKernels, BatchMemberOfTwoElementsFromOnePass) {
  tributary::Context ctx;
  tributary::Batch batch(ctx, "batch");
  auto& dots = batch.Add<Pair>(tributary::Sum{}, "dots");
  auto& lists = batch.Add<int>(tributary::Sum{}, "lists");
  const IntCase c = MakeIntCase();
  const auto& data = c.lists;
  const double* want = c.want;
  const int all_lists = c.all_lists;
  for (int rep = 0; rep < 2; ++rep) {
    batch.Expect(ListsOn(Rank()));
    for (int l = 0; l < ListsOn(Rank()); ++l) {
      Contribute(dots, rep ? Form::team : Form::md2, l, data[static_cast<std::size_t>(l)]);
      lists.Contribute(l, 1);
    }
    Wait(ctx, batch);
    TRIBUTARY_EXPECT_ALL(dots.val[0] == want[0] && dots.val[1] == want[1] &&
                         lists.val == all_lists);
  }
}

namespace {

// Three sums of one pass for a batch: x.y, x.x and the number of values.
struct AccumulateThree {
  TwoDots d;
  template <class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(int a, int b, Acc& acc) const {
    acc[0] += d.Xy(a, b);
    acc[1] += d.Xx(a, b);
    acc[2] += 1.0;
  }
};

}  // namespace

// One kernel feeds several members: two scalars (acc[0] and acc[1]), or a pair and a scalar
// accumulated into a summable array of three; a host member travels beside them. Then the
// exact form, bit for bit whatever the split, and the refusals.
TEST(MultiKernels, OneKernelFeedsSeveralBatchMembers) {
  const int n = kRows * kCols;
  const IntCase c = MakeIntCase();
  const auto& data = c.lists;
  const double* want = c.want;
  const int all_lists = c.all_lists;
  {
    tributary::Context ctx;
    tributary::Batch batch(ctx, "fast batch");
    auto& ts = batch.Add<double>(tributary::Sum{}, "ts");
    auto& tt = batch.Add<double>(tributary::Sum{}, "tt");
    auto& pair = batch.Add<Pair>(tributary::Sum{}, "pair");
    auto& count = batch.Add<double>(tributary::Sum{}, "count");
    auto& lists = batch.Add<int>(tributary::Sum{}, "lists");
    for (int rep = 0; rep < 3; ++rep) {
      batch.Expect(ListsOn(Rank()));
      for (int k = 0; k < ListsOn(Rank()); ++k) {
        const int l = rep % 2 ? ListsOn(Rank()) - 1 - k : k;
        const TwoDots& d = data[static_cast<std::size_t>(l)];
        const auto policy = MD<2>(Exec(), {0, 0}, {kRows, kCols});
        if (rep == 2)  // a team: every thread's values joined
          batch.ContributeKernel(l, Kokkos::TeamPolicy<Exec>(Exec(), kRows, Kokkos::AUTO),
                                 AccumulateTeam{d}, tributary::Sum{}, ts, tt);
        else
          batch.ContributeKernel(l, policy, Accumulate2D{d}, tributary::Sum{}, ts, tt);
        batch.ContributeKernel<SummableArray<double, 3>>(l, policy, AccumulateThree{d},
                                                         tributary::Sum{}, pair, count);
        lists.Contribute(l, 1);
      }
      Wait(ctx, batch);
      TRIBUTARY_EXPECT_ALL(ts.val == want[0] && tt.val == want[1] && pair.val[0] == want[0] &&
                           pair.val[1] == want[1] && count.val == 1.0 * n * all_lists &&
                           lists.val == all_lists);
    }
    // Refusals change nothing: the generation still completes.
    tributary::Batch other(ctx, "other batch");
    auto& stranger = other.Add<double>(tributary::Sum{}, "stranger");
    batch.Expect(ListsOn(Rank()));
    if (ListsOn(Rank()) > 0) {
      const auto policy = MD<2>(Exec(), {0, 0}, {kRows, kCols});
      std::string e = ErrorOf([&] {
        batch.ContributeKernel(0, policy, Accumulate2D{data[0]}, tributary::Sum{}, ts, ts);
      });
      EXPECT_NE(e.find("names member 'ts' twice"), std::string::npos) << e;
      e = ErrorOf([&] {
        batch.ContributeKernel(0, policy, Accumulate2D{data[0]}, tributary::Sum{}, ts, stranger);
      });
      EXPECT_NE(e.find("member 'stranger' belongs to another batch"), std::string::npos) << e;
    }
    for (int l = 0; l < ListsOn(Rank()); ++l) {
      const TwoDots& d = data[static_cast<std::size_t>(l)];
      const auto policy = MD<2>(Exec(), {0, 0}, {kRows, kCols});
      batch.ContributeKernel(l, policy, Accumulate2D{d}, tributary::Sum{}, ts, tt);
      batch.ContributeKernel<SummableArray<double, 3>>(l, policy, AccumulateThree{d},
                                                       tributary::Sum{}, pair, count);
      lists.Contribute(l, 1);
    }
    Wait(ctx, batch);
    TRIBUTARY_EXPECT_ALL(ts.val == want[0] && tt.val == want[1]);
  }

  // rank_count_independent: both members carry the bits of their exact sums.
  tributary::ContextOptions o;
  o.determinism = tributary::Determinism::rank_count_independent;
  tributary::Context ctx(o);
  tributary::Batch batch(ctx, "exact batch");
  auto& ts = batch.Add<double>(tributary::Sum{}, "ts");
  auto& tt = batch.Add<double>(tributary::Sum{}, "tt");
  auto& high = batch.Add<double>(tributary::Max{}, "high");
  ExactSum exact[2];
  for (int b = 0; b < kBlocks; ++b)
    for (int i = 0; i < kRows * kCols; ++i) {
      exact[0] += Wild(0, b, i) * Wild(1, b, i);
      exact[1] += Wild(0, b, i) * Wild(0, b, i);
    }
  std::vector<double> got;
  for (int per_list : {1, 3}) {
    std::vector<TwoDots> lists;
    for (const auto& b : ListsOfBlocks(per_list)) lists.push_back(ExactData(b));
    const int nl = static_cast<int>(lists.size());
    batch.Expect(nl);
    for (int l = 0; l < nl; ++l) {
      const TwoDots& d = lists[static_cast<std::size_t>(l)];
      const auto policy =
          MD<2>(Exec(), {0, 0}, {static_cast<int>(d.x.extent(0)), static_cast<int>(d.x.extent(1))});
      if (l == 0) {
        const std::string e = ErrorOf([&] {
          batch.ContributeKernel(l, policy, Accumulate2D{d}, tributary::Sum{}, ts, high);
        });
        EXPECT_NE(e.find("cannot feed members that sum exactly and members that do not"),
                  std::string::npos)
            << e;
      }
      batch.ContributeKernel(l, policy, Accumulate2D{d}, tributary::Sum{}, ts, tt);
      high.Contribute(l, 1.0 * per_list);
    }
    Wait(ctx, batch);
    got.push_back(ts.val);
    got.push_back(tt.val);
    TRIBUTARY_EXPECT_ALL(Bits(ts.val) == Bits(exact[0].Round()) &&
                         Bits(tt.val) == Bits(exact[1].Round()));
  }
  EXPECT_TRUE(SameBitsEverywhere(got));
}

namespace {
std::atomic<int> fences{0};
void CountFence(const char*, std::uint32_t, std::uint64_t*) { fences.fetch_add(1); }
}  // namespace

// Steady-state generations of a kernel of two sums fence nowhere (Kokkos 3.5 and later
// report fences to tools; 3.4 reports none).
TEST(MultiKernels, NoFenceInSteadyState) {
  tributary::Context ctx;
  AllReduce<Pair> fast(ctx, "fast pair");
  AllReduce<Pair> exact(ctx, "exact pair");
  exact.SetDeterminism(tributary::Determinism::rank_count_independent);
  std::vector<TwoDots> data;
  for (int l = 0; l < 3; ++l) {
    auto [x, y] = MakeData(
        kRows * kCols, [&](int i) { return IntX(Rank(), l, i); },
        [&](int i) { return IntY(Rank(), l, i); });
    data.push_back({x, y});
  }
  auto generation = [&] {
    fast.Expect(3, tributary::Sum{});
    exact.Expect(3, tributary::Sum{});
    for (int l = 2; l >= 0; --l) {
      Contribute(fast, Form::md2, l, data[static_cast<std::size_t>(l)]);
      Contribute(exact, Form::md2, l, data[static_cast<std::size_t>(l)]);
    }
    Wait(ctx, fast);
    Wait(ctx, exact);
  };
  generation();  // the first generation allocates the slots
  Kokkos::fence();
  Kokkos::Tools::Experimental::set_begin_fence_callback(&CountFence);
  fences = 0;
  for (int i = 0; i < 5; ++i) generation();
  Kokkos::Tools::Experimental::set_begin_fence_callback(nullptr);
  EXPECT_EQ(fences.load(), 0);
}
