// The exact-sum kernels' entry points (exact_kernels.hpp): which kernel runs (what the CPU
// has, and LimitExactKernels), and the values and records the vector kernels leave, one by
// one. The kernels themselves are in exact_kernels_avx2.cpp and exact_kernels_avx512.cpp.
#include "tributary/detail/exact/exact_kernels.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "exact/exact_kernels_x86.hpp"
#include "tributary/detail/exact/exact_window.hpp"

namespace tributary::detail {

#if TRIBUTARY_EXACT_AVX2
using namespace x86;  // the kernels this file dispatches to
#endif

namespace {

#if TRIBUTARY_EXACT_AVX2
ExactKernelLevel CpuLevel() noexcept {
  static const ExactKernelLevel level =
      !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ? ExactKernelLevel::none
      : __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
              __builtin_cpu_supports("avx512vl")
          ? ExactKernelLevel::avx512
          : ExactKernelLevel::avx2;
  return level;
}

#else

ExactKernelLevel CpuLevel() noexcept { return ExactKernelLevel::none; }

#endif

std::atomic<int> level_limit{static_cast<int>(ExactKernelLevel::avx512)};

ExactKernelLevel Level() noexcept {
  return static_cast<ExactKernelLevel>(
      std::min(static_cast<int>(CpuLevel()), level_limit.load(std::memory_order_relaxed)));
}
bool HaveAvx2() noexcept { return Level() >= ExactKernelLevel::avx2; }
[[maybe_unused]] bool HaveAvx512() noexcept { return Level() >= ExactKernelLevel::avx512; }

}  // namespace

bool ExactKernelsAvailable() noexcept { return HaveAvx2(); }

ExactKernelLevel LimitExactKernels(ExactKernelLevel limit) noexcept {
  level_limit.store(static_cast<int>(limit), std::memory_order_relaxed);
  return Level();
}

bool WidenRangeKernel(const double* x, std::size_t n, std::int64_t* lo, std::int64_t* hi,
                      bool* special) noexcept {
#if TRIBUTARY_EXACT_AVX2
  if (!HaveAvx2()) return false;
  Extremes seen;
  Scan(x, n, &seen);
  seen.Widen(lo, hi, special);
  return true;
#else
  (void)x, (void)n, (void)lo, (void)hi, (void)special;
  return false;
#endif
}

namespace {

#if TRIBUTARY_EXACT_AVX2
template <int Mode>
void Deposit(const double* x, std::size_t n, int first, std::uint32_t* records, WindowFit* fit,
             Extremes* seen) {
  std::size_t done = 0;
  if (n >= 4) {  // (the vector loops' set-up is not worth it for fewer)
    const DepositBounds bounds(first, fit);
    if (n >= kWideFrom && HaveAvx512()) done = Deposit3Wide<Mode>(x, n, bounds, records, fit, seen);
    done += HaveAvx512()
                ? Deposit3Narrow<Mode>(x + done, n - done, bounds, records + 3 * done, fit, seen)
                : Deposit3<Mode>(x + done, n - done, bounds, records + 3 * done, fit, seen);
  }
  // The last n mod 4 values one by one (the same records).
  ExactWindow w;
  w.first = first;
  w.digits = 3;
  w.flags = false;
  for (std::size_t k = done; k < n; ++k) {
    std::int64_t lo = std::int64_t(1) << 40, hi = -1;
    bool special = false;
    WidenRange(x[k], &lo, &hi, &special);
    if (Mode == kCheck && (special || (hi >= 0 && (lo < std::int64_t{32} * first || hi > fit->hi))))
      fit->fits = false;
    if (Mode == kMeasure) {
      const double a = std::fabs(x[k]);
      seen->special |= special;
      if (!special && a != 0) seen->Add(a, a);
    }
    const bool inside =
        !special &&
        (hi < 0 || (lo >= std::int64_t{32} * first && hi < std::int64_t{32} * (first + 3) - 1));
    WindowWord sum = 0;
    unsigned flags = 0;
    if (inside) DepositShort(&sum, w, x[k], &flags);
    StoreShort<ShortForm<3, false>>(records + 3 * k, sum, flags);
  }
}
#endif

}  // namespace

bool DepositKernel(const double* x, std::size_t n, int first, int digits, std::uint32_t* records,
                   WindowFit* fit) noexcept {
#if TRIBUTARY_EXACT_AVX2
  if (!HaveAvx2() || !KernelWindow(first, digits)) return false;
  if (fit)
    Deposit<kCheck>(x, n, first, records, fit, nullptr);
  else
    Deposit<kPlain>(x, n, first, records, nullptr, nullptr);
  return true;
#else
  (void)x, (void)n, (void)first, (void)digits, (void)records, (void)fit;
  return false;
#endif
}

bool DepositMeasuringKernel(const double* x, std::size_t n, int first, int digits,
                            std::uint32_t* records, std::int64_t* lo, std::int64_t* hi,
                            bool* special) noexcept {
#if TRIBUTARY_EXACT_AVX2
  if (!HaveAvx2() || !KernelWindow(first, digits)) return false;
  Extremes seen;
  Deposit<kMeasure>(x, n, first, records, nullptr, &seen);
  seen.Widen(lo, hi, special);
  return true;
#else
  (void)x, (void)n, (void)first, (void)digits, (void)records, (void)lo, (void)hi, (void)special;
  return false;
#endif
}

namespace {
#if TRIBUTARY_EXACT_AVX2
template <bool Sum>
void Round(const std::uint32_t* records, const std::uint32_t* more, std::size_t n, int first,
           double* out) {
  std::size_t done = 0;
  if (n >= 4) {  // the records' values are their integers times 2^(32 first - 1074)
    const double unscale = PowerOfTwo(32 * first - 1074);
    if (n >= kWideFrom && HaveAvx512()) done = Round3Wide<Sum>(records, more, n, unscale, out);
    const std::uint32_t* more_rest = Sum ? more + 3 * done : nullptr;
    done += HaveAvx512()
                ? Round3Narrow<Sum>(records + 3 * done, more_rest, n - done, unscale, out + done)
                : Round3<Sum>(records + 3 * done, more_rest, n - done, unscale, out + done);
  }
  using Form = ShortForm<3, false>;
  for (std::size_t k = done; k < n; ++k) {
    std::uint32_t record[3] = {records[3 * k], records[3 * k + 1], records[3 * k + 2]};
    if (Sum) ShortCombine<Form>(nullptr, more + 3 * k, record, 1);
    out[k] = RoundShort<double, Form>(record, first);
  }
}
#endif
}  // namespace

bool RoundKernel(const std::uint32_t* records, std::size_t n, int first, int digits,
                 double* out) noexcept {
#if TRIBUTARY_EXACT_AVX2
  if (!HaveAvx2() || !KernelWindow(first, digits)) return false;
  Round<false>(records, nullptr, n, first, out);
  return true;
#else
  (void)records, (void)n, (void)first, (void)digits, (void)out;
  return false;
#endif
}

bool RoundSumKernel(const std::uint32_t* a, const std::uint32_t* b, std::size_t n, int first,
                    int digits, double* out) noexcept {
#if TRIBUTARY_EXACT_AVX2
  if (!HaveAvx2() || !KernelWindow(first, digits)) return false;
  Round<true>(a, b, n, first, out);
  return true;
#else
  (void)a, (void)b, (void)n, (void)first, (void)digits, (void)out;
  return false;
#endif
}

}  // namespace tributary::detail
