// The AVX2 kernels of exact sums: four values or records at a time (exact_kernels_x86.hpp).
#include "exact/exact_kernels_x86.hpp"

#if TRIBUTARY_EXACT_AVX2

// GCC 12's AVX-512 intrinsics start from an undefined vector that it then reports as
// "may be used uninitialized" in its own header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

namespace tributary::detail::x86 {

// The four values' records: low 64 bits in `low`, the top digit in the low half of `high`.
// Interleaved as 12-byte records: dwords l0 l0' h0 l1 l1' h1 l2 l2' | h2 l3 l3' h3.
TRIBUTARY_AVX2 inline void StoreRecords3(std::uint32_t* out, __m256i low, __m256i high) {
  const __m256i take_low0 = _mm256_setr_epi32(0, 1, 0, 2, 3, 0, 4, 5);
  const __m256i take_high0 = _mm256_setr_epi32(0, 0, 0, 0, 0, 2, 0, 0);
  const __m256i first8 = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(low, take_low0),
                                            _mm256_permutevar8x32_epi32(high, take_high0), 0x24);
  const __m256i take_low1 = _mm256_setr_epi32(0, 6, 7, 0, 0, 0, 0, 0);
  const __m256i take_high1 = _mm256_setr_epi32(4, 0, 0, 6, 0, 0, 0, 0);
  const __m256i last4 = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(low, take_low1),
                                           _mm256_permutevar8x32_epi32(high, take_high1), 0x09);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), first8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 8), _mm256_castsi256_si128(last4));
}

// The inverse: the low 64 bits of four records, and their top digits (4 x int32).
TRIBUTARY_AVX2 inline void LoadRecords3(const std::uint32_t* in, __m256i* low, __m128i* high) {
  const __m256i first8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
  const __m256i last4 =
      _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 8)));
  const __m256i low_from0 = _mm256_setr_epi32(0, 1, 3, 4, 6, 7, 0, 0);
  const __m256i low_from1 = _mm256_setr_epi32(0, 0, 0, 0, 0, 0, 1, 2);
  *low = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(first8, low_from0),
                            _mm256_permutevar8x32_epi32(last4, low_from1), 0xc0);
  const __m256i high_from0 = _mm256_setr_epi32(2, 5, 0, 0, 0, 0, 0, 0);
  const __m256i high_from1 = _mm256_setr_epi32(0, 0, 0, 3, 0, 0, 0, 0);
  *high = _mm256_castsi256_si128(_mm256_blend_epi32(_mm256_permutevar8x32_epi32(first8, high_from0),
                                                    _mm256_permutevar8x32_epi32(last4, high_from1),
                                                    0x0c));
}

// Unsigned 32-bit integers in the low halves of 64-bit lanes, as doubles.
TRIBUTARY_AVX2 inline __m256d FromUint32(__m256i v) {
  const __m256d two52 = _mm256_set1_pd(4503599627370496.0);
  return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(v, _mm256_castpd_si256(two52))), two52);
}

template <int Mode>
TRIBUTARY_AVX2 std::size_t Deposit3(const double* x, std::size_t n, const DepositBounds& bounds,
                                    std::uint32_t* records, WindowFit* fit, Extremes* seen) {
  constexpr bool Check = Mode == kCheck;
  const __m256d scale = _mm256_set1_pd(bounds.scale);
  const __m256d below64 = _mm256_set1_pd(PowerOfTwo(-64)), two64 = _mm256_set1_pd(PowerOfTwo(64));
  const __m256d below32 = _mm256_set1_pd(PowerOfTwo(-32)), two32 = _mm256_set1_pd(PowerOfTwo(32));
  const __m256d magic = _mm256_set1_pd(kMagic);
  const __m256i magic_bits = _mm256_set1_epi64x(kMagicBits);
  const __m256d zero = _mm256_setzero_pd();
  // Checks: |x| < top; x = 0 or |x| >= bottom; x · scale an integer.
  const __m256d top = _mm256_set1_pd(bounds.top), bottom = _mm256_set1_pd(bounds.bottom);
  const __m256d magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(kMagnitudeBits));
  const __m256d inf = _mm256_set1_pd(std::numeric_limits<double>::infinity());
  const __m256d max = _mm256_set1_pd(std::numeric_limits<double>::max());
  __m256d bad = zero, smallest = inf, largest = zero;
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const __m256d v = _mm256_loadu_pd(x + k);
    const __m256d a = _mm256_mul_pd(v, scale);
    const __m256d u2 = _mm256_add_pd(_mm256_mul_pd(a, below64), magic);
    const __m256d t2 = _mm256_sub_pd(u2, magic);
    const __m256d r1 = _mm256_fnmadd_pd(t2, two64, a);  // a − t2 2^64, exact
    const __m256d u1 = _mm256_add_pd(_mm256_mul_pd(r1, below32), magic);
    const __m256d t1 = _mm256_sub_pd(u1, magic);
    const __m256d r0 = _mm256_fnmadd_pd(t1, two32, r1);  // exact, |r0| <= 2^31
    const __m256d u0 = _mm256_add_pd(r0, magic);
    const __m256i d2 = _mm256_sub_epi64(_mm256_castpd_si256(u2), magic_bits);
    const __m256i d1 = _mm256_sub_epi64(_mm256_castpd_si256(u1), magic_bits);
    const __m256i d0 = _mm256_sub_epi64(_mm256_castpd_si256(u0), magic_bits);
    // The 96-bit sum: low 64 bits wrap; the top digit borrows one where they are negative.
    const __m256i low = _mm256_add_epi64(_mm256_slli_epi64(d1, 32), d0);
    const __m256i high =
        _mm256_add_epi64(d2, _mm256_castpd_si256(_mm256_cmp_pd(r1, zero, _CMP_LT_OQ)));
    StoreRecords3(records + 3 * k, low, high);
    if constexpr (Check) {
      const __m256d mag = _mm256_and_pd(v, magnitude);
      const __m256d too_large = _mm256_cmp_pd(mag, top, _CMP_NLT_UQ);  // NaN too
      const __m256d too_small = _mm256_and_pd(_mm256_cmp_pd(mag, bottom, _CMP_LT_OQ),
                                              _mm256_cmp_pd(mag, zero, _CMP_NEQ_OQ));
      const __m256d fraction = _mm256_cmp_pd(r0, _mm256_sub_pd(u0, magic), _CMP_NEQ_UQ);
      bad = _mm256_or_pd(bad, _mm256_or_pd(too_large, _mm256_or_pd(too_small, fraction)));
    }
    if constexpr (Mode == kMeasure) {  // zeros and specials count as +inf for the smallest, 0 for
                                       // the largest
      const __m256d mag = _mm256_and_pd(v, magnitude);
      const __m256d finite = _mm256_cmp_pd(mag, max, _CMP_LE_OQ);
      bad = _mm256_or_pd(bad, _mm256_cmp_pd(mag, max, _CMP_NLE_UQ));
      const __m256d nonzero = _mm256_and_pd(finite, _mm256_cmp_pd(mag, zero, _CMP_NEQ_OQ));
      smallest = _mm256_min_pd(smallest, _mm256_blendv_pd(inf, mag, nonzero));
      largest = _mm256_max_pd(largest, _mm256_and_pd(finite, mag));
    }
  }
  if constexpr (Check)
    if (_mm256_movemask_pd(bad) != 0) fit->fits = false;
  if constexpr (Mode == kMeasure) {
    double s4[4], l4[4];
    _mm256_storeu_pd(s4, smallest);
    _mm256_storeu_pd(l4, largest);
    for (int j = 0; j < 4; ++j) seen->Add(s4[j], l4[j]);
    seen->special |= _mm256_movemask_pd(bad) != 0;
  }
  return k;
}

// out[k] = record k (with Sum: the sum of records k of `records` and `more`) rounded once.
template <bool Sum>
TRIBUTARY_AVX2 std::size_t Round3(const std::uint32_t* records, const std::uint32_t* more,
                                  std::size_t n, double unscale, double* out) {
  const __m256d scale = _mm256_set1_pd(unscale);
  const __m256d two32 = _mm256_set1_pd(PowerOfTwo(32));
  const __m256i low_digit = _mm256_set1_epi64x(0xffffffffLL);
  const __m256i sign = _mm256_set1_epi64x(std::numeric_limits<std::int64_t>::min());
  const __m256i even_dwords = _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0);
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    __m256i low;
    __m128i high;
    LoadRecords3(records + 3 * k, &low, &high);
    if constexpr (Sum) {  // 64-bit additions; their carries (unsigned, through the sign bit) go up
      __m256i low_more;
      __m128i high_more;
      LoadRecords3(more + 3 * k, &low_more, &high_more);
      const __m256i sum = _mm256_add_epi64(low, low_more);
      const __m256i carry =
          _mm256_cmpgt_epi64(_mm256_xor_si256(low, sign), _mm256_xor_si256(sum, sign));  // -1
      high = _mm_sub_epi32(_mm_add_epi32(high, high_more),
                           _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(carry, even_dwords)));
      low = sum;
    }
    const __m256d d0 = FromUint32(_mm256_and_si256(low, low_digit));
    const __m256d d1 = FromUint32(_mm256_srli_epi64(low, 32));
    const __m256d top = _mm256_mul_pd(_mm256_cvtepi32_pd(high), two32);  // d2 2^32, exact
    // t = RN(d2 2^32 + d1) and its error (Fast2Sum: |top| >= d1 unless top = 0), then
    // v = t 2^32 + (err 2^32 + d0) with both terms exact: one rounding of the record.
    const __m256d t = _mm256_add_pd(top, d1);
    const __m256d err = _mm256_sub_pd(d1, _mm256_sub_pd(t, top));
    const __m256d rest = _mm256_fmadd_pd(err, two32, d0);
    const __m256d v = _mm256_fmadd_pd(t, two32, rest);
    _mm256_storeu_pd(out + k, _mm256_mul_pd(v, scale));
  }
  return k;
}

// The extremes of x[0, n): four accumulators of four lanes each.
TRIBUTARY_AVX2 void Scan(const double* x, std::size_t n, Extremes* seen) {
  const __m256d inf = _mm256_set1_pd(std::numeric_limits<double>::infinity());
  const __m256d max = _mm256_set1_pd(std::numeric_limits<double>::max());
  const __m256d magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(kMagnitudeBits));
  const __m256d zero = _mm256_setzero_pd();
  __m256d small[4] = {inf, inf, inf, inf}, large[4] = {zero, zero, zero, zero}, bad = zero;
  std::size_t k = 0;
  for (; k + 16 <= n; k += 16) {
    for (int j = 0; j < 4; ++j) {
      const __m256d a =
          _mm256_and_pd(_mm256_loadu_pd(x + k + 4 * static_cast<std::size_t>(j)), magnitude);
      const __m256d finite = _mm256_cmp_pd(a, max, _CMP_LE_OQ);
      bad = _mm256_or_pd(bad, _mm256_cmp_pd(a, max, _CMP_NLE_UQ));
      // Zeros and specials count as +inf for the smallest, as 0 for the largest.
      const __m256d nonzero = _mm256_and_pd(finite, _mm256_cmp_pd(a, zero, _CMP_NEQ_OQ));
      small[j] = _mm256_min_pd(small[j], _mm256_blendv_pd(inf, a, nonzero));
      large[j] = _mm256_max_pd(large[j], _mm256_and_pd(finite, a));
    }
  }
  double s4[4], l4[4];
  for (int j = 0; j < 4; ++j) {
    _mm256_storeu_pd(s4, small[j]);
    _mm256_storeu_pd(l4, large[j]);
    for (int i = 0; i < 4; ++i) seen->Add(s4[i], l4[i]);
  }
  seen->special |= _mm256_movemask_pd(bad) != 0;
  for (; k < n; ++k) {
    const double a = std::fabs(x[k]);
    if (!(a <= std::numeric_limits<double>::max()))
      seen->special = true;
    else if (a != 0)
      seen->Add(a, a);
  }
}

template std::size_t Deposit3<kPlain>(const double*, std::size_t, const DepositBounds&,
                                      std::uint32_t*, WindowFit*, Extremes*);
template std::size_t Deposit3<kCheck>(const double*, std::size_t, const DepositBounds&,
                                      std::uint32_t*, WindowFit*, Extremes*);
template std::size_t Deposit3<kMeasure>(const double*, std::size_t, const DepositBounds&,
                                        std::uint32_t*, WindowFit*, Extremes*);
template std::size_t Round3<false>(const std::uint32_t*, const std::uint32_t*, std::size_t, double,
                                   double*);
template std::size_t Round3<true>(const std::uint32_t*, const std::uint32_t*, std::size_t, double,
                                  double*);

}  // namespace tributary::detail::x86

#endif  // TRIBUTARY_EXACT_AVX2
