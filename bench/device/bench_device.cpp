// Device partials, each a ratio measured side by side in one run:
//  1. bandwidth: a device partial sum of a large View through AllReduce<double>
//     (ContributeView + CheckReduce; bytes read per second) against a STREAM-like copy of
//     the same View (bytes read plus written per second), and a plain parallel_reduce
//     (`sum += v(i)`) for reference; the exact sum against one Kokkos reduction of an
//     ExactSum over chunks (the host backends' kernel, GPU backends' before their teams);
//  2. lists: 8 lists' partials combined on the device and posted as one reduction, against
//     one list, and against 8 lists each posting its own reduction;
//  3. two sums (t.s and t.t, as BiCGSTAB takes them): one kernel accumulating both in one
//     pass (AllReduce of a pair; a Batch kernel feeding two members; the exact mode)
//     against two kernels, and Kokkos alone doing the same for reference (the exact kernels
//     also against Kokkos' reductions of the accumulators, which host backends run).
// Run on 1 rank for the bandwidth (no network in the figure) and on any number for both.
// It ends with one table of those figures against their goals (docs/performance.md takes
// that table as it is).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_harness.hpp"
#include "tributary/kokkos.hpp"

// Kokkos before 3.7 calls join with volatile arguments; later versions without.
#if KOKKOS_VERSION < 30700
#define TRIBUTARY_BENCH_JOIN_CV volatile
#else
#define TRIBUTARY_BENCH_JOIN_CV
#endif

namespace {

namespace tb = tributary::bench;
using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;

template <class R>
void Wait(tributary::Context& ctx, R& r) {
  while (r.CheckReduce() != tributary::TaskStatus::complete) ctx.Progress();
}

struct CopyKernel {
  Kokkos::View<double*, Mem> dst, src;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const { dst(i) = src(i); }
};
struct PlainSum {
  Kokkos::View<double*, Mem> v;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, double& sum) const { sum += v(i); }
};

void Bandwidth(const tb::Options& base, tributary::Context& ctx, bool quick, tb::GoalTable& goals) {
  std::vector<std::size_t> sizes = {std::size_t(1) << 20, std::size_t(1) << 23,
                                    std::size_t(1) << 25};
  if (quick) sizes = {std::size_t(1) << 16};
  struct Row {
    std::size_t n;
    double copy_s, sum_s, plain_s, exact_s, chunks_s;
  };
  std::vector<Row> rows;
  for (std::size_t n : sizes) {
    tb::Options o = base;
    if (!quick) {
      o.iterations = static_cast<int>(std::max<std::size_t>(5, (std::size_t(1) << 27) / n));
      o.warmup = 3;
    }
    tb::Runner r(MPI_COMM_WORLD, "device sum vs copy bandwidth", "copy (STREAM-like)", o);
    Kokkos::View<double*, Mem> src("src", n), dst("dst", n);
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<Exec>(0, n),
        KOKKOS_LAMBDA(const std::int64_t i) { src(i) = static_cast<double>(i % 1000) * 0.25; });
    Kokkos::fence();
    const double want = [&] {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += static_cast<double>(i % 1000) * 0.25;
      return s * ctx.Size();
    }();
    r.Add("copy (STREAM-like)", [&] {
      Kokkos::parallel_for("copy",
                           Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(
                               0, static_cast<std::int64_t>(n)),
                           CopyKernel{dst, src});
      Kokkos::fence();
    });
    tributary::AllReduce<double> total(ctx, "device sum");
    r.Add(
        "Tributary ContributeView sum",
        [&] {
          total.Expect(1, tributary::Sum{});
          total.ContributeView(0, src, tributary::Sum{});
          Wait(ctx, total);
        },
        [&] { return total.val == want; });
    // rank_count_independent: every value added into an ExactSum on the device.
    tributary::AllReduce<double> exact(ctx, "device exact sum");
    exact.SetDeterminism(tributary::Determinism::rank_count_independent);
    r.Add(
        "Tributary ContributeView exact sum",
        [&] {
          exact.Expect(1, tributary::Sum{});
          exact.ContributeView(0, src, tributary::Sum{});
          Wait(ctx, exact);
        },
        [&] { return exact.val == want; });
    // The kernel of host backends (GPU backends took it too before their team kernels): one
    // Kokkos reduction of an ExactSum over contiguous chunks of 1024 elements.
    Kokkos::View<tributary::ExactSum, Mem> chunked("chunked");
    r.Add(
        "exact sum: one Kokkos reduction over chunks",
        [&] {
          tributary::detail::ExactAllKernel<decltype(src)> kernel{src};
          const std::int64_t items = tributary::detail::ShapeAllElements(kernel, src);
          Kokkos::parallel_reduce(
              "chunks", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, items),
              kernel, chunked);
          Kokkos::fence();
        },
        [&] {
          tributary::ExactSum got;
          Kokkos::deep_copy(got, chunked);
          return got.Round() * ctx.Size() == want;
        });
    double plain = 0;
    r.Add(
        "plain parallel_reduce sum",
        [&] {
          Kokkos::parallel_reduce("plain",
                                  Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(
                                      0, static_cast<std::int64_t>(n)),
                                  PlainSum{src}, plain);
        },
        [&] { return plain * ctx.Size() == want; });
    r.Run(tb::FormatBytes(n * sizeof(double)));
    r.Report();
    const auto& res = r.Results();
    rows.push_back({n, tb::MedianOf(res, "copy (STREAM-like)"),
                    tb::MedianOf(res, "Tributary ContributeView sum"),
                    tb::MedianOf(res, "plain parallel_reduce sum"),
                    tb::MedianOf(res, "Tributary ContributeView exact sum"),
                    tb::MedianOf(res, "exact sum: one Kokkos reduction over chunks")});
  }
  if (ctx.Rank() == 0) {
    std::printf(
        "\n| View | copy GB/s (read+write) | Tributary sum GB/s (read) | sum / copy | plain sum "
        "GB/s | exact sum GB/s (time / sum) |\n");
    std::printf("|---|---|---|---|---|---|\n");
    for (const Row& row : rows) {
      const double bytes = static_cast<double>(row.n * sizeof(double));
      const double copy = 2 * bytes / row.copy_s / 1e9, sum = bytes / row.sum_s / 1e9,
                   plain = bytes / row.plain_s / 1e9, exact = bytes / row.exact_s / 1e9;
      std::printf("| %s | %.1f | %.1f | %.0f%% | %.1f | %.2f (%.1fx) |\n",
                  tb::FormatBytes(row.n * sizeof(double)).c_str(), copy, sum, 100 * sum / copy,
                  plain, exact, row.exact_s / row.sum_s);
      const std::string view = tb::FormatBytes(row.n * sizeof(double)) + " View";
      char figures[96];
      std::snprintf(figures, sizeof figures, "%.1f vs %.1f GB/s", sum, copy);
      goals.Add(
          view + ": `ContributeView` sum (bytes read per second) vs a copy kernel (read + written)",
          figures, tb::FormatRatio(sum / copy),
          tb::GoalTable::Verdict("≥ 0.80", sum >= 0.8 * copy));
      std::snprintf(figures, sizeof figures, "%.1f vs %.1f GB/s", plain, sum);
      goals.Add(view + ": a plain `parallel_reduce` (`sum += v(i)`) vs the `ContributeView` sum",
                figures, tb::FormatRatio(plain / sum));
      goals.Add(
          view + ": the exact sum (`rank_count_independent`) vs the `ContributeView` sum, time",
          tb::FormatSeconds(row.exact_s) + " vs " + tb::FormatSeconds(row.sum_s),
          tb::FormatRatio(row.exact_s / row.sum_s));
      goals.Add(view +
                    ": the exact sum vs one Kokkos reduction of an `ExactSum` over chunks of "
                    "1024 elements (the host backends' kernel), time",
                tb::FormatSeconds(row.exact_s) + " vs " + tb::FormatSeconds(row.chunks_s),
                tb::FormatRatio(row.exact_s / row.chunks_s));
    }
  }
}

void Lists(const tb::Options& o, tributary::Context& ctx, tb::GoalTable& goals) {
  const int lists = 8;
  for (std::size_t n : {std::size_t(1), std::size_t(4096)}) {
    tb::Runner run(MPI_COMM_WORLD, "device partials: lists per reduction", "1 list", o);
    std::vector<Kokkos::View<double*, Mem>> data;
    for (int l = 0; l < lists; ++l) {
      Kokkos::View<double*, Mem> v("v", n);
      Kokkos::deep_copy(v, 1.0);
      data.push_back(v);
    }
    const double p = ctx.Size();
    tributary::AllReduce<double> one(ctx, "one list");
    run.Add(
        "1 list",
        [&] {
          one.Expect(1, tributary::Sum{});
          one.ContributeView(0, data[0], tributary::Sum{});
          Wait(ctx, one);
        },
        [&] { return one.val == p * static_cast<double>(n); });
    tributary::AllReduce<double> eight(ctx, "8 lists");
    run.Add(
        "8 lists, combined on the device, one reduction",
        [&] {
          eight.Expect(lists, tributary::Sum{});
          for (int l = lists - 1; l >= 0; --l)
            eight.ContributeView(l, data[static_cast<std::size_t>(l)], tributary::Sum{});
          Wait(ctx, eight);
        },
        [&] { return eight.val == p * lists * static_cast<double>(n); });
    std::vector<tributary::AllReduce<double>> own;
    for (int l = 0; l < lists; ++l) own.emplace_back(ctx, "own");
    run.Add(
        "8 lists, 8 reductions",
        [&] {
          for (int l = 0; l < lists; ++l) {
            own[static_cast<std::size_t>(l)].Expect(1, tributary::Sum{});
            own[static_cast<std::size_t>(l)].ContributeView(0, data[static_cast<std::size_t>(l)],
                                                            tributary::Sum{});
          }
          for (auto& r : own) Wait(ctx, r);
        },
        [&] { return own[7].val == p * static_cast<double>(n); });
    run.Run(std::to_string(n) + " per list");
    run.Report();
    if (ctx.Rank() == 0) {
      const auto& r = run.Results();
      const std::string lists_of =
          "8 lists of " + std::to_string(n) + (n == 1 ? " element" : " elements");
      goals.Add(lists_of + ": combined on the device and posted as one reduction vs one list",
                tb::FormatSeconds(r[1].median_s) + " vs " + tb::FormatSeconds(r[0].median_s),
                tb::FormatRatio(r[1].ratio));
      goals.Add(lists_of + ": each list posts its own reduction vs one list",
                tb::FormatSeconds(r[2].median_s) + " vs " + tb::FormatSeconds(r[0].median_s),
                tb::FormatRatio(r[2].ratio));
    }
  }
}

// Two sums of one pass, as Parthenon's BiCGSTAB takes its dot products (t.s and t.t): the
// value type a user's kernel accumulates into, on the pattern of Parthenon's summable arrays.
struct Pair {
  double data_[2];
  KOKKOS_INLINE_FUNCTION Pair() : data_{0, 0} {}
  KOKKOS_INLINE_FUNCTION Pair(const Pair& o) : data_{o.data_[0], o.data_[1]} {}
  KOKKOS_INLINE_FUNCTION Pair& operator=(const Pair& o) {
    data_[0] = o.data_[0];
    data_[1] = o.data_[1];
    return *this;
  }
  KOKKOS_INLINE_FUNCTION double& operator[](int c) { return data_[c]; }
  KOKKOS_INLINE_FUNCTION double* data() { return data_; }
  KOKKOS_INLINE_FUNCTION const double* data() const { return data_; }
  KOKKOS_INLINE_FUNCTION static constexpr int size() { return 2; }
};

// t.s and t.t, each its own kernel, accumulating into S (double, or tributary::ExactSum):
// class templates with a plain operator(), from which Kokkos 3.4 reads the value type.
template <class S>
struct DotTs {
  Kokkos::View<double*, Mem> t, s;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, S& sum) const { sum += t(i) * s(i); }
};
template <class S>
struct DotTt {
  Kokkos::View<double*, Mem> t;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, S& sum) const { sum += t(i) * t(i); }
};
// Both in one pass, into whatever accumulator the mode offers (Pair, double (&)[2],
// ExactSums<2>).
struct BothDots {
  Kokkos::View<double*, Mem> t, s;
  template <class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, Acc& acc) const {
    const double ti = t(i);
    acc[0] += ti * s(i);
    acc[1] += ti * ti;
  }
};
// The same into ExactSums<2> for Kokkos' own reduction (which needs the value type spelled).
struct BothDotsExact {
  Kokkos::View<double*, Mem> t, s;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, tributary::ExactSums<2>& acc) const {
    BothDots{t, s}(i, acc);
  }
};
// Kokkos alone: both in one parallel_reduce (an array reduction of two values).
struct KokkosBoth {
  using value_type = double[];
  unsigned value_count = 2;
  Kokkos::View<double*, Mem> t, s;
  KOKKOS_INLINE_FUNCTION void init(value_type v) const { v[0] = v[1] = 0; }
  KOKKOS_INLINE_FUNCTION void join(TRIBUTARY_BENCH_JOIN_CV double* dst,
                                   const TRIBUTARY_BENCH_JOIN_CV double* src) const {
    dst[0] += src[0];
    dst[1] += src[1];
  }
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, value_type v) const {
    const double ti = t(i);
    v[0] += ti * s(i);
    v[1] += ti * ti;
  }
};

// One pass of two sums against two kernels, through AllReduce (ContributeKernel), a Batch
// (one kernel feeding two members), the exact mode, and Kokkos alone for reference.
void TwoSums(const tb::Options& base, tributary::Context& ctx, bool quick, tb::GoalTable& goals) {
  std::vector<std::size_t> sizes = {std::size_t(1) << 17, std::size_t(1) << 23};
  if (quick) sizes = {std::size_t(1) << 12};
  using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;
  for (std::size_t n : sizes) {
    tb::Options o = base;
    if (!quick) {
      o.iterations = static_cast<int>(std::max<std::size_t>(5, (std::size_t(1) << 26) / n));
      o.warmup = 3;
    }
    const std::string two = "two kernels, two AllReduce<double>";
    tb::Runner r(MPI_COMM_WORLD, "two sums: one pass vs two kernels", two, o);
    Kokkos::View<double*, Mem> t("t", n), s("s", n);
    // Small integers: every sum is exact, whatever the order.
    Kokkos::parallel_for(
        "fill", Range(0, static_cast<std::int64_t>(n)), KOKKOS_LAMBDA(const std::int64_t i) {
          t(i) = static_cast<double>(i % 16);
          s(i) = static_cast<double>((i * 7) % 13);
        });
    Kokkos::fence();
    double want_ts = 0, want_tt = 0;
    for (std::size_t i = 0; i < n; ++i) {
      want_ts += static_cast<double>(i % 16) * static_cast<double>((i * 7) % 13);
      want_tt += static_cast<double>(i % 16) * static_cast<double>(i % 16);
    }
    want_ts *= ctx.Size();
    want_tt *= ctx.Size();
    const Range range(Exec(), 0, static_cast<std::int64_t>(n));
    const tributary::Sum sum;

    tributary::AllReduce<double> ts(ctx, "ts"), tt(ctx, "tt");
    r.Add(
        two,
        [&] {
          ts.Expect(1, sum);
          tt.Expect(1, sum);
          ts.ContributeKernel(0, range, DotTs<double>{t, s}, sum);
          tt.ContributeKernel(0, range, DotTt<double>{t}, sum);
          Wait(ctx, ts);
          Wait(ctx, tt);
        },
        [&] { return ts.val == want_ts && tt.val == want_tt; });
    tributary::AllReduce<Pair> both(ctx, "both");
    r.Add(
        "one pass, AllReduce<pair>",
        [&] {
          both.Expect(1, sum);
          both.ContributeKernel(0, range, BothDots{t, s}, sum);
          Wait(ctx, both);
        },
        [&] { return both.val[0] == want_ts && both.val[1] == want_tt; });
    tributary::Batch batch(ctx, "batch");
    auto& bts = batch.Add<double>(sum, "ts");
    auto& btt = batch.Add<double>(sum, "tt");
    r.Add(
        "one pass, Batch::ContributeKernel(ts, tt)",
        [&] {
          batch.Expect(1);
          batch.ContributeKernel(0, range, BothDots{t, s}, sum, bts, btt);
          Wait(ctx, batch);
        },
        [&] { return bts.val == want_ts && btt.val == want_tt; });
    tributary::AllReduce<double> xts(ctx, "exact ts"), xtt(ctx, "exact tt");
    tributary::AllReduce<Pair> xboth(ctx, "exact both");
    for (auto* x : {&xts, &xtt}) x->SetDeterminism(tributary::Determinism::rank_count_independent);
    xboth.SetDeterminism(tributary::Determinism::rank_count_independent);
    r.Add(
        "exact: two kernels",
        [&] {
          xts.Expect(1, sum);
          xtt.Expect(1, sum);
          xts.ContributeKernel(0, range, DotTs<tributary::ExactSum>{t, s}, sum);
          xtt.ContributeKernel(0, range, DotTt<tributary::ExactSum>{t}, sum);
          Wait(ctx, xts);
          Wait(ctx, xtt);
        },
        [&] { return xts.val == want_ts && xtt.val == want_tt; });
    r.Add(
        "exact: one pass (ExactSums<2>)",
        [&] {
          xboth.Expect(1, sum);
          xboth.ContributeKernel(0, range, BothDots{t, s}, sum);
          Wait(ctx, xboth);
        },
        [&] { return xboth.val[0] == want_ts && xboth.val[1] == want_tt; });
    // The exact kernels before the team kernels of GPU backends (host backends keep them):
    // Kokkos' reduction of the accumulator itself, as a user's own kernel runs it.
    Kokkos::View<tributary::ExactSum, Mem> rts("reduced ts"), rtt("reduced tt");
    Kokkos::View<tributary::ExactSums<2>, Mem> rboth("reduced both");
    auto rounded = [](const auto& view, int c) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
      if constexpr (std::is_same_v<std::decay_t<decltype(h())>, tributary::ExactSum>)
        return h().Round();
      else
        return h()[static_cast<std::size_t>(c)].Round();
    };
    r.Add(
        "exact: two Kokkos reductions of an ExactSum",
        [&] {
          Kokkos::parallel_reduce("ts", range, DotTs<tributary::ExactSum>{t, s},
                                  tributary::ExactSumReducer(rts));
          Kokkos::parallel_reduce("tt", range, DotTt<tributary::ExactSum>{t},
                                  tributary::ExactSumReducer(rtt));
          Kokkos::fence();
        },
        [&] {
          return rounded(rts, 0) * ctx.Size() == want_ts && rounded(rtt, 0) * ctx.Size() == want_tt;
        });
    r.Add(
        "exact: one Kokkos reduction of ExactSums<2>",
        [&] {
          Kokkos::parallel_reduce("both", range, BothDotsExact{t, s},
                                  tributary::ExactSumReducer(rboth));
          Kokkos::fence();
        },
        [&] {
          return rounded(rboth, 0) * ctx.Size() == want_ts &&
                 rounded(rboth, 1) * ctx.Size() == want_tt;
        });
    double kts = 0, ktt = 0, kboth[2] = {0, 0};
    r.Add(
        "Kokkos alone: two parallel_reduce",
        [&] {
          Kokkos::parallel_reduce("ts", range, DotTs<double>{t, s}, kts);
          Kokkos::parallel_reduce("tt", range, DotTt<double>{t}, ktt);
        },
        [&] { return kts * ctx.Size() == want_ts && ktt * ctx.Size() == want_tt; });
    r.Add(
        "Kokkos alone: one parallel_reduce of two",
        [&] {
          Kokkos::parallel_reduce("both", range, KokkosBoth{2, t, s}, kboth);
        },
        [&] { return kboth[0] * ctx.Size() == want_ts && kboth[1] * ctx.Size() == want_tt; });
    const std::string size = tb::FormatBytes(n * sizeof(double));
    r.Run(size + " per View");
    r.Report();
    if (ctx.Rank() == 0) {
      const auto& res = r.Results();
      auto row = [&](const std::string& what, const std::string& a, const std::string& b) {
        const double ta = tb::MedianOf(res, a), tb_ = tb::MedianOf(res, b);
        goals.Add(size + " Views: " + what, tb::FormatSeconds(ta) + " vs " + tb::FormatSeconds(tb_),
                  tb::FormatRatio(ta / tb_));
      };
      row("`AllReduce<pair>` one pass vs two kernels", "one pass, AllReduce<pair>", two);
      row("`Batch::ContributeKernel(ts, tt)` one pass vs two kernels",
          "one pass, Batch::ContributeKernel(ts, tt)", two);
      row("exact (`rank_count_independent`): one pass vs two kernels",
          "exact: one pass (ExactSums<2>)", "exact: two kernels");
      row("exact: two kernels vs two Kokkos reductions of an `ExactSum` (the host backends' "
          "kernels)",
          "exact: two kernels", "exact: two Kokkos reductions of an ExactSum");
      row("exact: one pass vs one Kokkos reduction of `ExactSums<2>` (the host backends' kernel)",
          "exact: one pass (ExactSums<2>)", "exact: one Kokkos reduction of ExactSums<2>");
      row("Kokkos alone: one `parallel_reduce` of two vs two",
          "Kokkos alone: one parallel_reduce of two", "Kokkos alone: two parallel_reduce");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Kokkos::initialize(argc, argv);
  {
    tb::Options defaults;
    defaults.iterations = 2000;
    defaults.repetitions = 9;
    defaults.warmup = 100;
    tb::CommandLine cl(
        "Device partials: bandwidth of a device partial sum, and many lists' "
        "device partials combined on the device.",
        defaults);
    if (const int code = cl.Parse(argc, argv); code >= 0) {
      Kokkos::finalize();
      MPI_Finalize();
      return code;
    }
    const bool quick = cl.quick;
    const tb::Options o = cl.options;
    tributary::Context ctx;
    tb::GoalTable goals;
    Bandwidth(o, ctx, quick, goals);
    Lists(o, ctx, goals);
    TwoSums(o, ctx, quick, goals);
    if (ctx.Rank() == 0) goals.Print();
  }
  Kokkos::finalize();
  MPI_Finalize();
  return 0;
}
