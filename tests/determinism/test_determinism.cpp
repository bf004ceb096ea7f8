// Determinism modes through the public API. rank_count_independent: the result equals the
// serial exact sum of the same data, correctly rounded (the same number at every rank
// count, so equality at 1-4 ranks is the independence), for every split of the data into
// lists and ranks, on adversarial data (large cancelling values, many tiny ones,
// subnormals, mixed signs), for scalars, vectors, floats, Reduce and hand-wired starts;
// operators it cannot cover are refused. run_to_run: the same bits over repeated
// generations with shuffled list completion order, never the MPI library's schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "reduction_test.hpp"
#include "test_types.hpp"
#include "tributary/detail/exact/exact_kernels.hpp"
#include "tributary/detail/exact/exact_window.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::Determinism;
using tributary::ExactSum;
using tributary::ScheduleKind;
using tributary::TaskStatus;
using tributary::testing::Rank;
using tributary::testing::Size;

using tributary::testing::Wait;

template <class T>
bool SameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

using tributary::testing::SameBitsEverywhere;

double Sum(std::initializer_list<double> xs) {
  ExactSum s;
  for (double x : xs) s.Add(x);
  return s.Round();
}

// ---------------------------------------------------------------------------------------
// The vector kernels of the wire form give what the element-by-element code gives

namespace kernels {
namespace d = tributary::detail;
using Form = d::ShortForm<3, false>;

// Random values below 2^top, with exponents within `span` of each other (and lower with
// random leading zeros unless `narrow`), some negative, some zero.
std::vector<double> Values(std::mt19937_64& rng, std::size_t n, int top, int span,
                           bool narrow = false) {
  std::vector<double> x(n);
  for (double& v : x) {
    const std::uint64_t mantissa = (rng() >> 11) | (narrow ? std::uint64_t(1) << 52 : 0);
    v = std::ldexp(static_cast<double>(mantissa), top - 53 - static_cast<int>(rng() % (span + 1)));
    if (rng() % 2) v = -v;
    if (rng() % 11 == 0) v = 0;
  }
  return x;
}

// Checks the kernels against the element-by-element code on x; false when x's window is
// not one they take (three digits).
bool MatchElementByElement(std::mt19937_64& rng, const std::vector<double>& x) {
  const std::size_t n = x.size();
  std::int64_t lo = std::int64_t(1) << 40, hi = -1, klo = lo, khi = hi;
  bool special = false, kspecial = false;
  for (double v : x) d::WidenRange(v, &lo, &hi, &special);
  EXPECT_TRUE(d::WidenRangeKernel(x.data(), n, &klo, &khi, &kspecial));
  EXPECT_EQ(klo, lo);
  EXPECT_EQ(khi, hi);
  EXPECT_EQ(kspecial, special);
  if (hi < 0) return false;
  const d::ExactWindow w = d::WindowFor(lo, hi, 8, false);
  std::vector<std::uint32_t> expected(3 * n), got(3 * n, 0xdeadbeef);
  for (std::size_t k = 0; k < n; ++k) {
    d::WindowWord sum = 0;
    unsigned flags = 0;
    d::DepositShort(&sum, w, x[k], &flags);
    d::StoreShort<Form>(expected.data() + 3 * k, sum, flags);
  }
  d::WindowFit fit;
  fit.hi = hi;
  if (!d::DepositKernel(x.data(), n, w.first, w.digits, got.data(), &fit)) return false;
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(got, expected) << "window from digit " << w.first;
  std::int64_t mlo = std::int64_t(1) << 40, mhi = -1;
  bool mspecial = false;
  std::fill(got.begin(), got.end(), 0xdeadbeef);
  EXPECT_TRUE(
      d::DepositMeasuringKernel(x.data(), n, w.first, 3, got.data(), &mlo, &mhi, &mspecial));
  EXPECT_EQ(got, expected) << "measuring, window from digit " << w.first;
  EXPECT_EQ(mlo, lo);
  EXPECT_EQ(mhi, hi);
  EXPECT_EQ(mspecial, special);
  // Pairs of records added and rounded in one pass, as a combine and a rounding do.
  std::vector<std::uint32_t> other(3 * n);
  for (std::size_t i = 0; i < 3 * n; ++i)
    other[i] = expected[(i + 3) % (3 * n)] ^ (i % 3 == 0 ? 0xfffu : 0u);
  std::vector<double> summed(n);
  EXPECT_TRUE(d::RoundSumKernel(expected.data(), other.data(), n, w.first, 3, summed.data()));
  for (std::size_t k = 0; k < n; ++k) {
    std::uint32_t sum[3] = {other[3 * k], other[3 * k + 1], other[3 * k + 2]};
    d::ShortCombine<Form>(nullptr, expected.data() + 3 * k, sum, 1);
    if (!SameBits(summed[k], d::RoundShort<double, Form>(sum, w.first))) {
      ADD_FAILURE() << "sum of records " << k << " of " << n << " in the window from digit "
                    << w.first;
      break;
    }
  }
  // Sums of records (carries between digits, negative totals), rounded both ways.
  for (std::size_t k = 1; k < n; ++k)
    d::ShortCombine<Form>(nullptr, expected.data() + 3 * (k - 1), expected.data() + 3 * k, 1);
  std::vector<double> rounded(n);
  EXPECT_TRUE(d::RoundKernel(expected.data(), n, w.first, 3, rounded.data()));
  for (std::size_t k = 0; k < n; ++k)
    if (!SameBits(rounded[k], d::RoundShort<double, Form>(expected.data() + 3 * k, w.first))) {
      ADD_FAILURE() << "record " << k << " of " << n << " in the window from digit " << w.first;
      break;
    }
  // A value that does not fit is reported, wherever it sits among the others: below the
  // window, above it, NaN, an infinity, and one bit below the lowest digit.
  const int bottom = 32 * w.first - 1074;
  const double outside[] = {
      std::ldexp(1.0, bottom - 1 - static_cast<int>(rng() % 40)),
      std::ldexp(1.0, static_cast<int>(hi) - 1073 + static_cast<int>(rng() % 3)),
      std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity(),
      std::ldexp(1.0, bottom + 40) + std::ldexp(1.0, bottom - 1)};
  for (double bad : outside) {
    std::vector<double> y = x;
    y[rng() % n] = bad;
    d::WindowFit f;
    f.hi = std::max<std::int64_t>(hi, bottom + 40 + 1074 + 52);
    if (bad == outside[1]) f.hi = hi;
    EXPECT_TRUE(d::DepositKernel(y.data(), n, w.first, 3, got.data(), &f));
    EXPECT_FALSE(f.fits) << bad << " in a window from digit " << w.first << ", " << n << " values";
    // Measured while written: the measure is right, and asks for another window where
    // the value is outside this one's digits (a value just above `hi` may still fit them).
    std::int64_t ylo = std::int64_t(1) << 40, yhi = -1, ymlo = ylo, ymhi = yhi;
    bool yspecial = false, ymspecial = false;
    for (double v : y) d::WidenRange(v, &ylo, &yhi, &yspecial);
    EXPECT_TRUE(
        d::DepositMeasuringKernel(y.data(), n, w.first, 3, got.data(), &ymlo, &ymhi, &ymspecial));
    EXPECT_EQ(ymlo, ylo);
    EXPECT_EQ(ymhi, yhi);
    EXPECT_EQ(ymspecial, yspecial);
    const d::ExactWindow wy = d::WindowFor(ylo, yhi, 8, yspecial);
    if (bad != outside[1]) {
      EXPECT_FALSE(wy.first == w.first && wy.digits == w.digits && wy.flags == w.flags) << bad;
    }
  }
  return true;
}
}  // namespace kernels

TEST(ExactKernels, WriteCheckAndRoundRecordsAsTheElementByElementCode) {
  namespace d = tributary::detail;
  if (!d::ExactKernelsAvailable())
    GTEST_SKIP() << "no AVX2 and FMA here: the element-by-element code runs";
  for (const d::ExactKernelLevel level : {d::ExactKernelLevel::avx2, d::ExactKernelLevel::avx512}) {
    if (d::LimitExactKernels(level) != level) continue;  // not on this CPU
    SCOPED_TRACE(level == d::ExactKernelLevel::avx2 ? "AVX2" : "AVX-512");
    std::mt19937_64 rng(20261123);
    int windows = 0;
    for (int trial = 0; trial < 3000 && !HasFailure(); ++trial) {
      const std::size_t n = 1 + rng() % 37;  // whole groups of four and a remainder
      const int top = static_cast<int>(rng() % 1200) - 600, span = static_cast<int>(rng() % 31);
      if (kernels::MatchElementByElement(rng, kernels::Values(rng, n, top, span))) ++windows;
    }
    EXPECT_GT(windows, 300);  // the three-digit windows the kernels take were among them
    // Long arrays (the 512-bit kernels, where the CPU has them), with a remainder.
    int long_windows = 0;
    for (int trial = 0; trial < 12 && !HasFailure(); ++trial)
      if (kernels::MatchElementByElement(
              rng, kernels::Values(rng, 20000 + 9 * trial, 7 * trial - 40, 2, true)))
        ++long_windows;
    EXPECT_GE(long_windows, 4);
  }
  d::LimitExactKernels(d::ExactKernelLevel::avx512);
}

// ---------------------------------------------------------------------------------------
// The accumulator alone

TEST(ExactSumAlone, RoundsOnceToNearestEven) {
  const double two53 = 9007199254740992.0;
  EXPECT_EQ(Sum({two53, 1.0}), two53);                            // a tie: to even
  EXPECT_EQ(Sum({two53, 1.0, std::ldexp(1.0, -30)}), two53 + 2);  // just above the tie
  EXPECT_EQ(Sum({two53, 1.0, -two53}), 1.0);                      // naive left-to-right gives 0
  EXPECT_EQ(Sum({-two53, -1.0, -std::ldexp(1.0, -30)}), -(two53 + 2));
  EXPECT_EQ(Sum({two53 + 2, 1.0}), two53 + 4);    // a tie to the even neighbour above
  EXPECT_EQ(Sum({1e308, 1e308, -1e308}), 1e308);  // an intermediate overflow
  EXPECT_EQ(Sum({DBL_MAX, DBL_MAX}), std::numeric_limits<double>::infinity());
  EXPECT_EQ(Sum({DBL_MAX, std::ldexp(1.0, 969)}), DBL_MAX);  // below half an ulp
  EXPECT_EQ(Sum({DBL_MAX, std::ldexp(1.0, 970)}),
            std::numeric_limits<double>::infinity());  // the tie
  const double tiny = std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(Sum({tiny, tiny, tiny}), 3 * tiny);
  EXPECT_EQ(Sum({tiny, -tiny}), 0.0);
  EXPECT_EQ(Sum({DBL_MIN, -tiny}), DBL_MIN - tiny);  // the largest subnormal, exactly
  EXPECT_EQ(Sum({1.0, std::ldexp(1.0, -1074), -1.0}), tiny);
  EXPECT_TRUE(std::isnan(Sum({1.0, std::numeric_limits<double>::quiet_NaN()})));
  EXPECT_TRUE(std::isnan(
      Sum({std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()})));
  EXPECT_EQ(Sum({-std::numeric_limits<double>::infinity(), 1e308, 1e308}),
            -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(SameBits(Sum({-0.0, -0.0}), 0.0));  // an exact zero is +0
  // Floats round from the exact value, not through a double.
  ExactSum f;
  f.Add(16777216.0f);
  f.Add(1.0f);
  EXPECT_EQ(f.RoundFloat(), 16777216.0f);
  f.Add(std::ldexp(1.0f, -20));
  EXPECT_EQ(f.RoundFloat(), 16777218.0f);
  // Many maximal values: the top digits hold them, and they cancel exactly.
  ExactSum big;
  for (int i = 0; i < 1000000; ++i) big.Add(DBL_MAX);
  EXPECT_EQ(big.Round(), std::numeric_limits<double>::infinity());
  for (int i = 0; i < 999999; ++i) big.Add(-DBL_MAX);
  EXPECT_EQ(big.Round(), DBL_MAX);
}

// Adversarial values: large cancelling pairs, many tiny ones, subnormals, mixed signs over
// the whole exponent range; deterministic in the seed, independent of the rank count.
std::vector<double> Adversarial(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mant(0.5, 1.0);
  std::uniform_int_distribution<int> expo(-1070, 1020), kind(0, 4);
  std::vector<double> v;
  while (v.size() < n) {
    switch (kind(rng)) {
      case 0: {  // a huge value and its negative, far apart in the list
        const double x = std::ldexp(mant(rng), 1000 + expo(rng) % 20);
        v.push_back(x);
        v.insert(v.begin() + static_cast<long>(rng() % v.size()), -x);
        break;
      }
      case 1:
        v.push_back(std::ldexp(mant(rng), -1000 - expo(rng) % 60));
        break;  // tiny
      case 2:
        v.push_back(std::numeric_limits<double>::denorm_min() * static_cast<double>(rng() % 1000));
        break;
      default:
        v.push_back((rng() & 1 ? -1.0 : 1.0) * std::ldexp(mant(rng), expo(rng)));
        break;
    }
  }
  v.resize(n);
  return v;
}

TEST(ExactSumAlone, OrderAndGroupingDoNotMatter) {
  const auto v = Adversarial(20000, 7);
  ExactSum forward, backward, grouped;
  for (double x : v) forward.Add(x);
  for (auto it = v.rbegin(); it != v.rend(); ++it) backward.Add(*it);
  for (std::size_t g = 0; g < v.size(); g += 37) {
    ExactSum part;
    for (std::size_t i = g; i < std::min(v.size(), g + 37); ++i) part.Add(v[i]);
    grouped += part;
  }
  EXPECT_TRUE(forward.SameValue(backward));
  EXPECT_TRUE(forward.SameValue(grouped));
  EXPECT_TRUE(SameBits(forward.Round(), grouped.Round()));
}

// ---------------------------------------------------------------------------------------
// rank_count_independent through the reductions

tributary::ContextOptions Independent() {
  tributary::ContextOptions o;
  o.determinism = Determinism::rank_count_independent;
  return o;
}

// How the global values are split into lists and ranks.
struct Layout {
  int lists_per_rank;
  bool round_robin;
  bool rank0_empty;  // rank 0 has no list at all (when there are other ranks)
};
const Layout kLayouts[] = {{1, false, false}, {3, false, false}, {5, true, false}, {2, true, true}};

// The lists of this rank (global list ids) and the values of one global list.
std::vector<int> MyLists(const Layout& l) {
  const bool skip0 = l.rank0_empty && Size() > 1;
  if (skip0 && Rank() == 0) return {};
  const int first_rank = skip0 ? 1 : 0;
  std::vector<int> ids;
  for (int k = 0; k < l.lists_per_rank; ++k)
    ids.push_back((Rank() - first_rank) * l.lists_per_rank + k);
  return ids;
}
int TotalLists(const Layout& l) {
  return (Size() - (l.rank0_empty && Size() > 1 ? 1 : 0)) * l.lists_per_rank;
}
bool OwnedBy(const Layout& l, std::size_t j, std::size_t n, int list) {
  const int total = TotalLists(l);
  return l.round_robin ? static_cast<int>(j % static_cast<std::size_t>(total)) == list
                       : static_cast<int>(j * static_cast<std::size_t>(total) / n) == list;
}

TEST(RankCountIndependent, ScalarSumEqualsTheExactSumForEverySplit) {
  tributary::Context ctx(Independent());
  tributary::AllReduce<double> total(ctx, "total");
  // Data whose exact sum is known: cancelling pairs plus 2^53 + 1 + 2^-30 (-> 2^53 + 2).
  std::vector<double> known = Adversarial(6000, 11);
  for (double x : std::vector<double>(known)) known.push_back(-x);
  std::shuffle(known.begin(), known.end(), std::mt19937(3));
  known.push_back(9007199254740992.0);
  known.insert(known.begin() + 100, 1.0);
  known.insert(known.begin() + 5000, std::ldexp(1.0, -30));
  const std::vector<double> wild = Adversarial(9000, 12);  // no known sum: the serial reference
  ExactSum serial;
  for (double x : wild) serial.Add(x);
  for (const std::vector<double>* data : {static_cast<const std::vector<double>*>(&known), &wild}) {
    const double expect = data == &known ? 9007199254740994.0 : serial.Round();
    for (const Layout& l : kLayouts) {
      const auto mine = MyLists(l);
      total.Expect(static_cast<int>(mine.size()), tributary::Sum{});
      // Lists finish in reverse order; each sums its block exactly.
      for (std::size_t k = mine.size(); k-- > 0;) {
        ExactSum part;
        for (std::size_t j = 0; j < data->size(); ++j)
          if (OwnedBy(l, j, data->size(), mine[k])) part.Add((*data)[j]);
        total.Contribute(static_cast<int>(k), part);
      }
      Wait(ctx, total);
      TRIBUTARY_EXPECT_ALL(SameBits(total.val, expect));
      TRIBUTARY_EXPECT_ALL(SameBitsEverywhere(std::vector<double>{total.val}));
    }
  }
}

TEST(RankCountIndependent, VectorsFloatsAndReduceToEveryRoot) {
  tributary::Context ctx(Independent());
  constexpr std::size_t kElems = 7;
  std::vector<std::vector<double>> data;
  for (std::size_t e = 0; e < kElems; ++e)
    data.push_back(Adversarial(3000, 100 + static_cast<unsigned>(e)));
  // The float data: the same values brought into float's range (exponents modulo 120), with
  // float subnormals.
  const auto to_float = [](double x, std::size_t j) {
    int ex = 0;
    const double m = std::frexp(x, &ex);
    return j % 50 == 0 ? std::numeric_limits<float>::denorm_min() * static_cast<float>(j % 7)
                       : static_cast<float>(std::ldexp(m, ex % 120));
  };
  std::vector<double> expect(kElems);
  std::vector<float> expect_f(kElems);
  for (std::size_t e = 0; e < kElems; ++e) {
    ExactSum s, sf;
    for (std::size_t j = 0; j < data[e].size(); ++j) {
      s.Add(data[e][j]);
      sf.Add(to_float(data[e][j], j));
    }
    expect[e] = s.Round();
    expect_f[e] = sf.RoundFloat();
  }
  const auto parts = [&](const Layout& l, int list, bool as_float) {
    std::vector<ExactSum> p(kElems);
    for (std::size_t e = 0; e < kElems; ++e)
      for (std::size_t j = 0; j < data[e].size(); ++j)
        if (OwnedBy(l, j, data[e].size(), list))
          p[e].Add(as_float ? to_float(data[e][j], j) : data[e][j]);
    return p;
  };
  tributary::AllReduce<std::vector<double>> vec(ctx, "several totals");
  tributary::AllReduce<std::vector<float>> vecf(ctx, "float totals");
  tributary::Reduce<std::vector<double>> red(ctx, "to a root");
  for (const Layout& l : kLayouts) {
    const auto mine = MyLists(l);
    const int n = static_cast<int>(mine.size());
    vec.val.assign(kElems, 0.0);  // the length a rank without lists contributes
    vecf.val.assign(kElems, 0.0f);
    vec.Expect(n, tributary::Sum{});
    vecf.Expect(n, tributary::Sum{});
    for (int k = 0; k < n; ++k) {
      vec.Contribute(k, parts(l, mine[static_cast<std::size_t>(k)], false));
      vecf.Contribute(k, parts(l, mine[static_cast<std::size_t>(k)], true));
    }
    Wait(ctx, vec);
    Wait(ctx, vecf);
    TRIBUTARY_EXPECT_ALL(vec.val == expect);
    TRIBUTARY_EXPECT_ALL(std::memcmp(vecf.val.data(), expect_f.data(), kElems * sizeof(float)) ==
                         0);
    TRIBUTARY_EXPECT_ALL(SameBitsEverywhere(vec.val) && SameBitsEverywhere(vecf.val));
    for (int root = 0; root < Size(); ++root) {
      red.val.assign(kElems, -1.0);
      red.Expect(n, root, tributary::Sum{});
      for (int k = 0; k < n; ++k)
        red.Contribute(k, parts(l, mine[static_cast<std::size_t>(k)], false));
      Wait(ctx, red);
      TRIBUTARY_EXPECT_ALL(red.val ==
                           (Rank() == root ? expect : std::vector<double>(kElems, -1.0)));
    }
  }
}

TEST(RankCountIndependent, ValuesContributedAsTheyAreAndHandWiredStarts) {
  tributary::Context ctx(Independent());
  // Every list contributes one global value as it is: the set of values is the same at
  // every rank count, so the result is too.
  const std::vector<double> values =
      Adversarial(24, 5);  // 24 lists in all: 24 = 1*24 = 2*12 = 3*8 = 4*6
  ExactSum serial;
  for (double x : values) serial.Add(x);
  tributary::AllReduce<double> r(ctx, "values");
  const int per_rank = static_cast<int>(values.size()) / Size();
  if (static_cast<int>(values.size()) % Size() == 0) {
    r.Expect(per_rank, tributary::Sum{});
    for (int k = per_rank; k-- > 0;)
      r.Contribute(k, values[static_cast<std::size_t>(Rank() * per_rank + k)]);
    Wait(ctx, r);
    TRIBUTARY_EXPECT_ALL(SameBits(r.val, serial.Round()));
  }
  // Hand-wired: val on each rank, summed exactly across the ranks.
  tributary::AllReduce<std::vector<double>> h(ctx, "hand-wired");
  h.val = {values[static_cast<std::size_t>(Rank())], -values[static_cast<std::size_t>(Rank())],
           1e-300 * (Rank() + 1)};
  h.StartReduce(tributary::Sum{});
  Wait(ctx, h);
  ExactSum third;
  for (int q = 0; q < Size(); ++q) third.Add(1e-300 * (q + 1));
  TRIBUTARY_EXPECT_ALL(h.val[1] + h.val[0] == 0.0 && SameBits(h.val[2], third.Round()));
  // A Reduce from a separate input: the exact sum reads the input, which stays unchanged;
  // val receives the result on the root only.
  tributary::Reduce<std::vector<double>> from_input(ctx, "from an input");
  for (int root = 0; root < Size(); ++root) {
    const std::vector<double> input = {values[static_cast<std::size_t>(Rank())],
                                       1e-300 * (Rank() + 1)};
    const std::vector<double> before = input;
    from_input.val.assign(5, -1.0);
    from_input.StartReduce(root, tributary::Sum{}, input);
    Wait(ctx, from_input);
    ExactSum first;
    for (int q = 0; q < Size(); ++q) first.Add(values[static_cast<std::size_t>(q)]);
    const bool ok = Rank() == root ? from_input.val.size() == 2 &&
                                         SameBits(from_input.val[0], first.Round()) &&
                                         SameBits(from_input.val[1], third.Round())
                                   : from_input.val == std::vector<double>(5, -1.0);
    TRIBUTARY_EXPECT_ALL(ok && input == before);
  }
  // Operators whose result does not depend on the order run as they are.
  tributary::AllReduce<long> count(ctx, "count");
  count.val = Rank() + 1;
  count.StartReduce(tributary::Sum{});
  tributary::AllReduce<double> dt(ctx, "dt");
  dt.val = 1.0 / (Rank() + 1);
  dt.StartReduce(tributary::Min{});
  Wait(ctx, count);
  Wait(ctx, dt);
  TRIBUTARY_EXPECT_ALL(count.val == Size() * (Size() + 1) / 2 && dt.val == 1.0 / Size());
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const tributary::UsageError& e) {
    return e.what();
  }
  return "";
}

// An allreduce whose ranks agreed on a window before skips the agreement round (unless a
// length check needs it) and runs in that window; where one rank's data no longer fits it
// (larger or smaller magnitudes, a special value, more lists), every rank agrees again and
// the result is still the exact sum. Generations alternate between fitting and not.
// Short vectors reuse the window speculatively; long ones (from 8192 values) write their
// records in it while measuring, then agree; a hand-wired start rounds into its own input.
// Rabenseifner and the ring (forced as well as chosen) round their own share of the
// records, also a speculative generation's count of misfits.
TEST(RankCountIndependent, LaterGenerationsReuseTheAgreedWindowUntilTheDataOutgrowIt) {
  const std::optional<ScheduleKind> schedules[] = {std::nullopt, ScheduleKind::rabenseifner,
                                                   ScheduleKind::ring};
  for (const std::optional<ScheduleKind>& schedule : schedules)
    for (tributary::DebugLevel debug : {tributary::DebugLevel::none, tributary::DebugLevel::basic})
      for (const std::size_t n : {std::size_t(5), std::size_t(9001)}) {
        tributary::ContextOptions o = Independent();
        o.debug = debug;
        o.allreduce_schedule = schedule;
        tributary::Context ctx(o);
        tributary::AllReduce<std::vector<double>> vec(ctx, "window reused");
        tributary::AllReduce<std::vector<double>> hand(ctx, "hand-wired window reused");
        tributary::AllReduce<double> scalar(ctx, "scalar window reused");
        const int last = Size() - 1;
        // Generations 6 and 7: values whose sum over one list per rank fills the window's top
        // digit (bits up to 32m - 2, the sign in 32m - 1), so 40 lists per rank overflow it.
        int room = 0;
        while ((1 << room) < Size()) ++room;
        int k = 0;
        while ((k + 1074 + room + 1) % 32 != 31) ++k;
        const double full = std::ldexp(2.0 - std::ldexp(1.0, -52), k);
        // Rank r's value of element i in generation g.
        const auto value = [&](int g, int r, std::size_t i) {
          const double base = 1.0 + 0.25 * r + static_cast<double>(i % 8);  // a three-digit window
          switch (g) {
            case 2:
              return r == last && i == 0 ? std::ldexp(1.0, 600) : base;  // higher bits
            case 3:
              return r == 0 && i == 1 ? std::ldexp(1.0, -900) : base;  // lower bits
            case 4:
              return r == last && i == 2 ? std::numeric_limits<double>::infinity() : base;
            case 6:
            case 7:
              return full;
            default:
              return base;
          }
        };
        const auto lists_in = [](int g) { return g == 7 ? 40 : 1; };  // generation 7: more terms
        for (int g = 0; g < 10; ++g) {
          const int lists = lists_in(g);
          std::vector<double> expect(n);
          for (std::size_t i = 0; i < n; ++i) {
            ExactSum s;
            for (int q = 0; q < Size(); ++q)
              for (int l = 0; l < lists; ++l) s.Add(value(g, q, i));
            expect[i] = s.Round();
          }
          vec.Expect(lists, tributary::Sum{});
          scalar.Expect(lists, tributary::Sum{});
          for (int l = lists; l-- > 0;) {
            std::vector<double> mine(n);
            for (std::size_t i = 0; i < n; ++i) mine[i] = value(g, Rank(), i);
            vec.Contribute(l, mine);
            scalar.Contribute(l, mine[static_cast<std::size_t>(g) % n]);
          }
          hand.val.resize(n);  // one list's data
          for (std::size_t i = 0; i < n; ++i) hand.val[i] = value(g, Rank(), i);
          hand.StartReduce(tributary::Sum{});
          Wait(ctx, vec);
          Wait(ctx, scalar);
          Wait(ctx, hand);
          std::vector<double> hand_expect = expect;
          if (lists > 1)
            for (std::size_t i = 0; i < n; ++i) {
              ExactSum s;
              for (int q = 0; q < Size(); ++q) s.Add(value(g, q, i));
              hand_expect[i] = s.Round();
            }
          const bool ok = std::memcmp(vec.val.data(), expect.data(), n * sizeof(double)) == 0 &&
                          SameBits(scalar.val, expect[static_cast<std::size_t>(g) % n]) &&
                          std::memcmp(hand.val.data(), hand_expect.data(), n * sizeof(double)) == 0;
          EXPECT_TRUE(ok) << "generation " << g << ", " << n << " values, "
                          << (schedule ? tributary::ToString(*schedule) : "chosen schedule");
          TRIBUTARY_EXPECT_ALL(ok && SameBitsEverywhere(vec.val) && SameBitsEverywhere(hand.val));
        }
      }
}

TEST(RankCountIndependent, BatchMembersSumExactlyBesideTheOthers) {
  tributary::Context ctx(Independent());
  tributary::Batch step(ctx, "step");
  auto& mass = step.Add<double>(tributary::Sum{}, "mass");
  auto& dt = step.Add<double>(tributary::Min{}, "dt");
  auto& cells = step.Add<long>(tributary::Sum{}, "cells");
  auto& energy = step.Add<float>(tributary::Sum{}, "energy");
  const std::vector<double> data = Adversarial(4000, 21);
  ExactSum serial;
  for (double x : data) serial.Add(x);
  for (const Layout& l : kLayouts) {
    const auto mine = MyLists(l);
    step.Expect(static_cast<int>(mine.size()));
    for (std::size_t k = 0; k < mine.size(); ++k) {
      ExactSum part;
      long n = 0;
      for (std::size_t j = 0; j < data.size(); ++j)
        if (OwnedBy(l, j, data.size(), mine[k])) {
          part.Add(data[j]);
          ++n;
        }
      const int list = static_cast<int>(k);
      mass.Contribute(list, part);
      dt.Contribute(list, 0.5 + mine[k]);
      cells.Contribute(list, n);
      energy.Contribute(list, static_cast<float>(n));  // values as they are: counts, exact in float
    }
    Wait(ctx, step);
    TRIBUTARY_EXPECT_ALL(SameBits(mass.val, serial.Round()) && dt.val == 0.5 &&
                         cells.val == static_cast<long>(data.size()) &&
                         energy.val == static_cast<float>(data.size()));
  }
  // Values far outside the window the ranks agreed on last: every rank agrees again and
  // the sum stays exact.
  step.Expect(1);
  mass.Contribute(0, Rank() == 0 ? 1e300 : 1e-300 * (Rank() + 1));
  dt.Contribute(0, 1.0 + Rank());
  cells.Contribute(0, 1L);
  energy.Contribute(0, 2.0f);
  Wait(ctx, step);
  ExactSum wide;
  for (int r = 0; r < Size(); ++r) wide.Add(r == 0 ? 1e300 : 1e-300 * (r + 1));
  TRIBUTARY_EXPECT_ALL(SameBits(mass.val, wide.Round()) && dt.val == 1.0 && cells.val == Size() &&
                       energy.val == 2.0f * static_cast<float>(Size()));
  // A hand-wired start sums each rank's `val` exactly too.
  mass.val = 0.1 * (Rank() + 1);
  dt.val = 3.0 - Rank();
  cells.val = 2;
  energy.val = 0.5f;
  step.StartReduce();
  Wait(ctx, step);
  ExactSum tenths;
  for (int r = 0; r < Size(); ++r) tenths.Add(0.1 * (r + 1));
  TRIBUTARY_EXPECT_ALL(SameBits(mass.val, tenths.Round()) && dt.val == 4.0 - Size() &&
                       cells.val == 2L * Size() && energy.val == 0.5f * static_cast<float>(Size()));
  // Members it cannot cover are refused when they are added.
  tributary::Batch other(ctx, "other");
  const std::string e = ErrorOf([&] { other.Add<double>(tributary::Prod{}, "growth"); });
  TRIBUTARY_EXPECT_ALL(e.find("Batch 'other'") != std::string::npos &&
                       e.find("rank_count_independent is not available") != std::string::npos);
}

TEST(RankCountIndependent, WhatItCannotCoverIsAClearErrorAtStart) {
  tributary::Context ctx(Independent());
  tributary::AllReduce<double> p(ctx, "product");
  p.val = 1.5;
  const std::string e = ErrorOf([&] { p.StartReduce(tributary::Prod{}); });
  TRIBUTARY_EXPECT_ALL(e.find("AllReduce<double> 'product'") != std::string::npos &&
                       e.find("rank_count_independent is not available") != std::string::npos);
  // The object stays usable: the same generation failed, the next one starts.
  EXPECT_THROW(p.CheckReduce(), tributary::UsageError);
  p.val = 2.0;
  p.StartReduce(tributary::Sum{});
  Wait(ctx, p);
  TRIBUTARY_EXPECT_ALL(p.val == 2.0 * Size());
  tributary::AllReduce<tributary::testing::Mat> m(ctx, "matrices");
  TRIBUTARY_EXPECT_ALL(!ErrorOf([&] { m.StartReduce(tributary::testing::MatMul{}); }).empty());
  // ExactSum partials need the mode and a floating-point Sum.
  tributary::Context fast;
  tributary::AllReduce<double> f(fast, "fast");
  f.Expect(1, tributary::Sum{});
  TRIBUTARY_EXPECT_ALL(ErrorOf([&] {
                         f.Contribute(0, ExactSum(1.0));
                       }).find("need Determinism::rank_count_independent") != std::string::npos);
  f.Contribute(0, 1.0);
  Wait(fast, f);
  // The mode is set per object too, but not while a generation is collecting.
  f.SetDeterminism(Determinism::rank_count_independent);
  f.Expect(1, tributary::Sum{});
  TRIBUTARY_EXPECT_ALL(!ErrorOf([&] { f.SetDeterminism(Determinism::fast); }).empty());
  f.Contribute(0, ExactSum(0.25));
  Wait(fast, f);
  TRIBUTARY_EXPECT_ALL(f.val == 0.25 * Size() &&
                       f.DeterminismMode() == Determinism::rank_count_independent);
}

// ---------------------------------------------------------------------------------------
// run_to_run

TEST(RunToRun, SameBitsWhateverTheListCompletionOrderAndNeverTheLibrarysOrder) {
  // A tree that would pick the MPI library for everything.
  const std::string path = std::string(TRIBUTARY_TEST_TMP) + "/library-only.json";
  if (Rank() == 0)
    std::ofstream(path)
        << R"({"tree": [{"collective": "any", "then": {"schedule": "mpi_library"}}]})";
  tributary::testing::Barrier();
  tributary::ContextOptions o;
  o.determinism = Determinism::run_to_run;
  o.selection_file = path;
  tributary::Context ctx(o);
  tributary::AllReduce<std::vector<double>> r(ctx, "repeatable");
  constexpr int kLists = 4;
  const auto data = Adversarial(kLists * 64, static_cast<unsigned>(Rank()) + 1);
  std::vector<double> first;
  std::mt19937 shuffle(static_cast<unsigned>(Rank()) * 31 + 7);
  for (int rep = 0; rep < 6; ++rep) {
    std::vector<int> order(kLists);
    for (int k = 0; k < kLists; ++k) order[static_cast<std::size_t>(k)] = k;
    std::shuffle(order.begin(), order.end(), shuffle);
    r.Expect(kLists, tributary::Sum{});
    for (int k : order)
      r.Contribute(k, std::vector<double>(data.begin() + k * 64, data.begin() + (k + 1) * 64));
    Wait(ctx, r);
    if (rep == 0) first = r.val;
    TRIBUTARY_EXPECT_ALL(r.val == first && SameBitsEverywhere(r.val));
    TRIBUTARY_EXPECT_ALL(r.ScheduleUsed() == ScheduleKind::reduce_bcast);
  }
  // A forced MPI-library schedule cannot keep the promise: a clear error at start.
  tributary::ContextOptions forced = o;
  forced.selection_file.clear();
  forced.allreduce_schedule = ScheduleKind::mpi_library;
  tributary::Context fctx(forced);
  tributary::AllReduce<double> x(fctx, "forced");
  x.val = 1.0;
  TRIBUTARY_EXPECT_ALL(ErrorOf([&] {
                         x.StartReduce(tributary::Sum{});
                       }).find("run_to_run cannot use") != std::string::npos);
}

}  // namespace
