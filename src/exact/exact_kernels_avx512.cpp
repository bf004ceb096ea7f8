// The AVX-512 kernels of exact sums: eight at a time (Wide), or four with the 256-bit forms
// (Narrow) (exact_kernels_x86.hpp).
#include "exact/exact_kernels_x86.hpp"

#if TRIBUTARY_EXACT_AVX2

// GCC 12's AVX-512 intrinsics start from an undefined vector that it then reports as
// "may be used uninitialized" in its own header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

namespace tributary::detail::x86 {

// The same eight at a time (AVX-512F and DQ): two-source permutes build the 12-byte
// records, and the checks are mask registers.

template <int Mode>
TRIBUTARY_AVX512 std::size_t Deposit3Wide(const double* x, std::size_t n,
                                          const DepositBounds& bounds, std::uint32_t* records,
                                          WindowFit* fit, Extremes* seen) {
  constexpr bool Check = Mode == kCheck;
  const __m512d scale = _mm512_set1_pd(bounds.scale);
  const __m512d below64 = _mm512_set1_pd(PowerOfTwo(-64)), two64 = _mm512_set1_pd(PowerOfTwo(64));
  const __m512d below32 = _mm512_set1_pd(PowerOfTwo(-32)), two32 = _mm512_set1_pd(PowerOfTwo(32));
  const __m512d magic = _mm512_set1_pd(kMagic);
  const __m512i magic_bits = _mm512_set1_epi64(kMagicBits);
  const __m512d zero = _mm512_setzero_pd();
  const __m512d top = _mm512_set1_pd(bounds.top), bottom = _mm512_set1_pd(bounds.bottom);
  // Record r is dwords 3r, 3r + 1 (low 64 bits: dwords 2r, 2r + 1 of `low`) and 3r + 2 (the
  // top digit: dword 2r of `high`, index 16 + 2r of the pair).
  const __m512i first16 = _mm512_setr_epi32(0, 1, 16, 2, 3, 18, 4, 5, 20, 6, 7, 22, 8, 9, 24, 10);
  const __m512i last8 = _mm512_setr_epi32(11, 26, 12, 13, 28, 14, 15, 30, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i one = _mm512_set1_epi64(1);
  const __m512d max = _mm512_set1_pd(std::numeric_limits<double>::max());
  __m512d smallest = _mm512_set1_pd(std::numeric_limits<double>::infinity()), largest = zero;
  __mmask8 bad = 0;
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m512d v = _mm512_loadu_pd(x + k);
    const __m512d a = _mm512_mul_pd(v, scale);
    const __m512d u2 = _mm512_add_pd(_mm512_mul_pd(a, below64), magic);
    const __m512d r1 = _mm512_fnmadd_pd(_mm512_sub_pd(u2, magic), two64, a);
    const __m512d u1 = _mm512_add_pd(_mm512_mul_pd(r1, below32), magic);
    const __m512d r0 = _mm512_fnmadd_pd(_mm512_sub_pd(u1, magic), two32, r1);
    const __m512d u0 = _mm512_add_pd(r0, magic);
    const __m512i d2 = _mm512_sub_epi64(_mm512_castpd_si512(u2), magic_bits);
    const __m512i d1 = _mm512_sub_epi64(_mm512_castpd_si512(u1), magic_bits);
    const __m512i d0 = _mm512_sub_epi64(_mm512_castpd_si512(u0), magic_bits);
    const __m512i low = _mm512_add_epi64(_mm512_slli_epi64(d1, 32), d0);
    const __mmask8 negative = _mm512_cmp_pd_mask(r1, zero, _CMP_LT_OQ);
    const __m512i high = _mm512_mask_sub_epi64(d2, negative, d2, one);
    std::uint32_t* out = records + 3 * k;
    _mm512_storeu_si512(out, _mm512_permutex2var_epi32(low, first16, high));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16),
                        _mm512_castsi512_si256(_mm512_permutex2var_epi32(low, last8, high)));
    if constexpr (Check) {
      const __m512d mag = _mm512_abs_pd(v);
      bad |= _mm512_cmp_pd_mask(mag, top, _CMP_NLT_UQ);  // NaN too
      bad |= _mm512_mask_cmp_pd_mask(_mm512_cmp_pd_mask(mag, zero, _CMP_NEQ_OQ), mag, bottom,
                                     _CMP_LT_OQ);
      bad |= _mm512_cmp_pd_mask(r0, _mm512_sub_pd(u0, magic), _CMP_NEQ_UQ);
    }
    if constexpr (Mode == kMeasure) {
      const __m512d mag = _mm512_abs_pd(v);
      const __mmask8 finite = _mm512_cmp_pd_mask(mag, max, _CMP_LE_OQ);
      bad |= static_cast<__mmask8>(~finite);
      smallest = _mm512_mask_min_pd(
          smallest, _mm512_mask_cmp_pd_mask(finite, mag, zero, _CMP_NEQ_OQ), smallest, mag);
      largest = _mm512_mask_max_pd(largest, finite, largest, mag);
    }
  }
  if constexpr (Check)
    if (bad) fit->fits = false;
  if constexpr (Mode == kMeasure) {
    double s8[8], l8[8];
    _mm512_storeu_pd(s8, smallest);
    _mm512_storeu_pd(l8, largest);
    for (int j = 0; j < 8; ++j) seen->Add(s8[j], l8[j]);
    seen->special |= bad != 0;
  }
  return k;
}

// Eight records: their low 64 bits and their top digits (8 x int32).
TRIBUTARY_AVX512 inline void LoadRecords3Wide(const std::uint32_t* in, __m512i* low,
                                              __m256i* high) {
  // From 24 dwords (16 + 8): the low 64 bits of record r at dwords 3r, 3r + 1; its top digit at 3r
  // + 2.
  const __m512i low_from =
      _mm512_setr_epi32(0, 1, 3, 4, 6, 7, 9, 10, 12, 13, 15, 16, 18, 19, 21, 22);
  const __m512i high_from = _mm512_setr_epi32(2, 5, 8, 11, 14, 17, 20, 23, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i a = _mm512_loadu_si512(in);
  const __m512i b =
      _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 16)));
  *low = _mm512_permutex2var_epi32(a, low_from, b);
  *high = _mm512_castsi512_si256(_mm512_permutex2var_epi32(a, high_from, b));
}

template <bool Sum>
TRIBUTARY_AVX512 std::size_t Round3Wide(const std::uint32_t* records, const std::uint32_t* more,
                                        std::size_t n, double unscale, double* out) {
  const __m512d scale = _mm512_set1_pd(unscale);
  const __m512d two32 = _mm512_set1_pd(PowerOfTwo(32));
  const __m512i low_digit = _mm512_set1_epi64(0xffffffffLL);
  const __m256i one = _mm256_set1_epi32(1);
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __m512i low;
    __m256i high;
    LoadRecords3Wide(records + 3 * k, &low, &high);
    if constexpr (Sum) {
      __m512i low_more;
      __m256i high_more;
      LoadRecords3Wide(more + 3 * k, &low_more, &high_more);
      const __m512i sum = _mm512_add_epi64(low, low_more);
      high = _mm256_add_epi32(high, high_more);
      high = _mm256_mask_add_epi32(high, _mm512_cmplt_epu64_mask(sum, low), high, one);
      low = sum;
    }
    const __m512d d0 = _mm512_cvtepu64_pd(_mm512_and_si512(low, low_digit));
    const __m512d d1 = _mm512_cvtepu64_pd(_mm512_srli_epi64(low, 32));
    const __m512d top = _mm512_mul_pd(_mm512_cvtepi32_pd(high), two32);
    const __m512d t = _mm512_add_pd(top, d1);  // as in Round3
    const __m512d err = _mm512_sub_pd(d1, _mm512_sub_pd(t, top));
    const __m512d v = _mm512_fmadd_pd(t, two32, _mm512_fmadd_pd(err, two32, d0));
    _mm512_storeu_pd(out + k, _mm512_mul_pd(v, scale));
  }
  return k;
}

// Four at a time with AVX-512's 256-bit forms (no start-up of the wide units): one
// two-source permute builds or splits the records, and the checks are masks.
template <int Mode>
TRIBUTARY_AVX512 std::size_t Deposit3Narrow(const double* x, std::size_t n,
                                            const DepositBounds& bounds, std::uint32_t* records,
                                            WindowFit* fit, Extremes* seen) {
  constexpr bool Check = Mode == kCheck;
  const __m256d scale = _mm256_set1_pd(bounds.scale);
  const __m256d below64 = _mm256_set1_pd(PowerOfTwo(-64)), two64 = _mm256_set1_pd(PowerOfTwo(64));
  const __m256d below32 = _mm256_set1_pd(PowerOfTwo(-32)), two32 = _mm256_set1_pd(PowerOfTwo(32));
  const __m256d magic = _mm256_set1_pd(kMagic);
  const __m256i magic_bits = _mm256_set1_epi64x(kMagicBits);
  const __m256d zero = _mm256_setzero_pd();
  const __m256d top = _mm256_set1_pd(bounds.top), bottom = _mm256_set1_pd(bounds.bottom);
  const __m256d max = _mm256_set1_pd(std::numeric_limits<double>::max());
  const __m256d magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(kMagnitudeBits));
  // Record r: dwords 2r, 2r + 1 of `low`, then dword 2r of `high` (index 8 + 2r of the pair).
  const __m256i first8 = _mm256_setr_epi32(0, 1, 8, 2, 3, 10, 4, 5);
  const __m256i last4 = _mm256_setr_epi32(12, 6, 7, 14, 0, 0, 0, 0);
  const __m256i one = _mm256_set1_epi64x(1);
  __m256d smallest = _mm256_set1_pd(std::numeric_limits<double>::infinity()), largest = zero;
  __mmask8 bad = 0;
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const __m256d v = _mm256_loadu_pd(x + k);
    const __m256d a = _mm256_mul_pd(v, scale);
    const __m256d u2 = _mm256_fmadd_pd(a, below64, magic);  // a 2^-64 is exact: one rounding
    const __m256d r1 = _mm256_fnmadd_pd(_mm256_sub_pd(u2, magic), two64, a);
    const __m256d u1 = _mm256_fmadd_pd(r1, below32, magic);
    const __m256d r0 = _mm256_fnmadd_pd(_mm256_sub_pd(u1, magic), two32, r1);
    const __m256d u0 = _mm256_add_pd(r0, magic);
    const __m256i d2 = _mm256_sub_epi64(_mm256_castpd_si256(u2), magic_bits);
    const __m256i d1 = _mm256_sub_epi64(_mm256_castpd_si256(u1), magic_bits);
    const __m256i d0 = _mm256_sub_epi64(_mm256_castpd_si256(u0), magic_bits);
    const __m256i low = _mm256_add_epi64(_mm256_slli_epi64(d1, 32), d0);
    const __m256i high =
        _mm256_mask_sub_epi64(d2, _mm256_cmp_pd_mask(r1, zero, _CMP_LT_OQ), d2, one);
    std::uint32_t* out = records + 3 * k;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                        _mm256_permutex2var_epi32(low, first8, high));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 8),
                     _mm256_castsi256_si128(_mm256_permutex2var_epi32(low, last4, high)));
    if constexpr (Check) {
      const __m256d mag = _mm256_and_pd(v, magnitude);
      bad |= _mm256_cmp_pd_mask(mag, top, _CMP_NLT_UQ);  // NaN too
      bad |= _mm256_mask_cmp_pd_mask(_mm256_cmp_pd_mask(mag, zero, _CMP_NEQ_OQ), mag, bottom,
                                     _CMP_LT_OQ);
      bad |= _mm256_cmp_pd_mask(r0, _mm256_sub_pd(u0, magic), _CMP_NEQ_UQ);
    }
    if constexpr (Mode == kMeasure) {
      const __m256d mag = _mm256_and_pd(v, magnitude);
      const __mmask8 finite = _mm256_cmp_pd_mask(mag, max, _CMP_LE_OQ);
      bad |= static_cast<__mmask8>(~finite & 0xf);
      smallest = _mm256_mask_min_pd(
          smallest, _mm256_mask_cmp_pd_mask(finite, mag, zero, _CMP_NEQ_OQ), smallest, mag);
      largest = _mm256_mask_max_pd(largest, finite, largest, mag);
    }
  }
  if constexpr (Check)
    if (bad) fit->fits = false;
  if constexpr (Mode == kMeasure) {
    double s4[4], l4[4];
    _mm256_storeu_pd(s4, smallest);
    _mm256_storeu_pd(l4, largest);
    for (int j = 0; j < 4; ++j) seen->Add(s4[j], l4[j]);
    seen->special |= bad != 0;
  }
  return k;
}

template <bool Sum>
TRIBUTARY_AVX512 std::size_t Round3Narrow(const std::uint32_t* records, const std::uint32_t* more,
                                          std::size_t n, double unscale, double* out) {
  const __m256d scale = _mm256_set1_pd(unscale);
  const __m256d two32 = _mm256_set1_pd(PowerOfTwo(32));
  const __m256i low_digit = _mm256_set1_epi64x(0xffffffffLL);
  const __m256i low_from = _mm256_setr_epi32(0, 1, 3, 4, 6, 7, 9, 10);
  const __m256i high_from = _mm256_setr_epi32(2, 5, 8, 11, 0, 0, 0, 0);
  const __m128i one = _mm_set1_epi32(1);
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const std::uint32_t* in = records + 3 * k;
    const __m256i a8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
    const __m256i a4 =
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 8)));
    __m256i low = _mm256_permutex2var_epi32(a8, low_from, a4);
    __m128i high = _mm256_castsi256_si128(_mm256_permutex2var_epi32(a8, high_from, a4));
    if constexpr (Sum) {
      const std::uint32_t* in_more = more + 3 * k;
      const __m256i b8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in_more));
      const __m256i b4 =
          _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in_more + 8)));
      const __m256i sum = _mm256_add_epi64(low, _mm256_permutex2var_epi32(b8, low_from, b4));
      high =
          _mm_add_epi32(high, _mm256_castsi256_si128(_mm256_permutex2var_epi32(b8, high_from, b4)));
      high = _mm_mask_add_epi32(high, _mm256_cmplt_epu64_mask(sum, low), high, one);
      low = sum;
    }
    const __m256d d0 = _mm256_cvtepu64_pd(_mm256_and_si256(low, low_digit));
    const __m256d d1 = _mm256_cvtepu64_pd(_mm256_srli_epi64(low, 32));
    const __m256d top = _mm256_mul_pd(_mm256_cvtepi32_pd(high), two32);
    const __m256d t = _mm256_add_pd(top, d1);  // as in Round3
    const __m256d err = _mm256_sub_pd(d1, _mm256_sub_pd(t, top));
    const __m256d v = _mm256_fmadd_pd(t, two32, _mm256_fmadd_pd(err, two32, d0));
    _mm256_storeu_pd(out + k, _mm256_mul_pd(v, scale));
  }
  return k;
}

template std::size_t Deposit3Wide<kPlain>(const double*, std::size_t, const DepositBounds&,
                                          std::uint32_t*, WindowFit*, Extremes*);
template std::size_t Deposit3Wide<kCheck>(const double*, std::size_t, const DepositBounds&,
                                          std::uint32_t*, WindowFit*, Extremes*);
template std::size_t Deposit3Wide<kMeasure>(const double*, std::size_t, const DepositBounds&,
                                            std::uint32_t*, WindowFit*, Extremes*);
template std::size_t Deposit3Narrow<kPlain>(const double*, std::size_t, const DepositBounds&,
                                            std::uint32_t*, WindowFit*, Extremes*);
template std::size_t Deposit3Narrow<kCheck>(const double*, std::size_t, const DepositBounds&,
                                            std::uint32_t*, WindowFit*, Extremes*);
template std::size_t Deposit3Narrow<kMeasure>(const double*, std::size_t, const DepositBounds&,
                                              std::uint32_t*, WindowFit*, Extremes*);
template std::size_t Round3Wide<false>(const std::uint32_t*, const std::uint32_t*, std::size_t,
                                       double, double*);
template std::size_t Round3Wide<true>(const std::uint32_t*, const std::uint32_t*, std::size_t,
                                      double, double*);
template std::size_t Round3Narrow<false>(const std::uint32_t*, const std::uint32_t*, std::size_t,
                                         double, double*);
template std::size_t Round3Narrow<true>(const std::uint32_t*, const std::uint32_t*, std::size_t,
                                        double, double*);

}  // namespace tributary::detail::x86

#endif  // TRIBUTARY_EXACT_AVX2
