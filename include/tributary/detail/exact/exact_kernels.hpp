// Vector kernels for the wire form of exact sums of doubles (see ExactWindow): measuring
// the window, writing records and rounding them, four doubles at a time where the CPU
// has AVX2 and FMA (checked once at run time). Each returns false where it does not apply;
// the caller then runs the element-by-element code in exact_window.hpp, which gives the
// same records and the same roundings.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/exact/exact_kernels.hpp> is internal to Tributary: include <tributary/exact_sum.hpp> instead"
#endif

#include <cstddef>
#include <cstdint>

#include "tributary/detail/exact/exact_window.hpp"  // WindowFit

namespace tributary::detail {

/// True when the kernels run here (x86-64 with AVX2 and FMA).
bool ExactKernelsAvailable() noexcept;

/// The instruction sets the kernels use: AVX2 and FMA; with AVX-512 (F, DQ, VL) also its
/// 256-bit forms, and its 512-bit ones from 16384 values.
enum class ExactKernelLevel { none, avx2, avx512 };
/// Keeps the kernels at or below `limit` (tests run each level the CPU has); returns the
/// level they now use.
ExactKernelLevel LimitExactKernels(ExactKernelLevel limit) noexcept;

/// The lowest and highest bit of the finite nonzero values among x[0, n) (units of 2^-1074;
/// *lo and *hi are lowered and raised, as WidenRange does) and whether one is a NaN or an
/// infinity.
bool WidenRangeKernel(const double* x, std::size_t n, std::int64_t* lo, std::int64_t* hi,
                      bool* special) noexcept;

/// Writes x[0, n) as records of a window of `digits` 32-bit digits from digit `first`,
/// without a flags word; with `fit`, checks the values against it (records of values that
/// do not fit are meaningless). Applies to 3 digits with 2 <= first <= 60.
bool DepositKernel(const double* x, std::size_t n, int first, int digits, std::uint32_t* records,
                   WindowFit* fit) noexcept;

/// The same, without a check, measuring x[0, n) as WidenRangeKernel does while writing:
/// where some value does not fit the window (a window agreed before, a guess), the
/// records are meaningless and the measure says so.
bool DepositMeasuringKernel(const double* x, std::size_t n, int first, int digits,
                            std::uint32_t* records, std::int64_t* lo, std::int64_t* hi,
                            bool* special) noexcept;

/// out[k] = record k rounded once to double, for records as DepositKernel writes them.
bool RoundKernel(const std::uint32_t* records, std::size_t n, int first, int digits,
                 double* out) noexcept;

/// out[k] = the sum of records k of `a` and `b` rounded once (a combine and a rounding in
/// one pass, for the last combine of a schedule that finishes its elements).
bool RoundSumKernel(const std::uint32_t* a, const std::uint32_t* b, std::size_t n, int first,
                    int digits, double* out) noexcept;

}  // namespace tributary::detail
