// The AVX2 kernels of exact sums (exact_kernels.hpp). A value x of a window from digit
// `first` is the integer a = x · 2^(1074 − 32 first) (exact: a power-of-two scaling that
// neither overflows nor underflows for values that fit), split into three signed 32-bit
// digits by rounding to multiples of 2^64 and 2^32: each remainder is exact, so
// a = t2 2^64 + t1 2^32 + t0 with |t_i| <= 2^31, and the record is that sum modulo 2^96.
// Rounding a record back adds its digits as doubles with one rounding (see RoundShort).

#include "tributary/detail/exact_kernels.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include "tributary/detail/exact_window.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TRIBUTARY_EXACT_AVX2 1
// GCC 12's AVX-512 intrinsics start from an undefined vector that it then reports as
// "may be used uninitialized" in its own header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#else
#define TRIBUTARY_EXACT_AVX2 0
#endif

namespace tributary::detail {

namespace {

#if TRIBUTARY_EXACT_AVX2

// The windows the kernels take: three digits, and scalings that stay normal doubles.
bool KernelWindow(int first, int digits) { return digits == 3 && first >= 2 && first <= 60; }

// The 512-bit kernels start from this many values: the wide units take microseconds to
// start after a pause, which smaller messages do not earn back (CHANGELOG.md, 0.1.0).
constexpr std::size_t kWideFrom = 16384;

// What a deposit does besides writing: nothing, check the values against the window
// (WindowFit), or measure them (Extremes).
constexpr int kPlain = 0, kCheck = 1, kMeasure = 2;

// The smallest nonzero and the largest finite magnitude seen, and whether a NaN or an
// infinity was; the bit positions follow (a value's grow with its magnitude).
struct Extremes {
  double smallest = std::numeric_limits<double>::infinity();
  double largest = 0;
  bool special = false;
  void Add(double small, double large) {
    smallest = std::min(smallest, small);
    largest = std::max(largest, large);
  }
  void Widen(std::int64_t* lo, std::int64_t* hi, bool* any_special) const {
    if (special) *any_special = true;
    if (largest > 0) {
      bool unused = false;
      WidenRange(smallest, lo, hi, &unused);
      WidenRange(largest, lo, hi, &unused);
    }
  }
};

// 2^e from its bits (normal exponents; the kernels' windows keep them so), else ldexp.
double PowerOfTwo(int e) {
  if (e < -1022 || e > 1023) return std::ldexp(1.0, e);
  const std::uint64_t bits = static_cast<std::uint64_t>(e + 1023) << 52;
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

#define TRIBUTARY_AVX2 __attribute__((target("avx2,fma")))

// Adding 1.5 · 2^52 rounds a double below 2^51 in magnitude to an integer, which is then
// the low bits of the sum's representation minus those of the constant.
constexpr double kMagic = 6755399441055744.0;
constexpr long long kMagicBits = 0x4338000000000000LL;
constexpr long long kMagnitudeBits = 0x7fffffffffffffffLL;

// The scalings and limits of a deposit into the window from digit `first`, computed once
// for whichever kernel runs: values times `scale` are the window's integers; a value that
// fits is below `top` in magnitude (with `fit`: below 2^(fit->hi + 1 - 1074)) and zero or
// at least `bottom`.
struct DepositBounds {
  DepositBounds(int first, const WindowFit* fit)
      : scale(PowerOfTwo(1074 - 32 * first)),
        top(!fit                    ? 0.0
            : fit->hi - 1073 > 1023 ? std::numeric_limits<double>::infinity()
                                    : PowerOfTwo(static_cast<int>(fit->hi) - 1073)),
        bottom(PowerOfTwo(32 * first - 1074)) {}
  double scale, top, bottom;
};

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

// The same eight at a time (AVX-512F and DQ): two-source permutes build the 12-byte
// records, and the checks are mask registers.
#define TRIBUTARY_AVX512 __attribute__((target("avx2,fma,avx512f,avx512dq,avx512vl")))

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

#undef TRIBUTARY_AVX512

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
      const __m256d a = _mm256_and_pd(_mm256_loadu_pd(x + k + 4 * j), magnitude);
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

#undef TRIBUTARY_AVX2

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
    if (Mode == kCheck && (special || (hi >= 0 && (lo < 32 * first || hi > fit->hi))))
      fit->fits = false;
    if (Mode == kMeasure) {
      const double a = std::fabs(x[k]);
      seen->special |= special;
      if (!special && a != 0) seen->Add(a, a);
    }
    const bool inside = !special && (hi < 0 || (lo >= 32 * first && hi < 32 * (first + 3) - 1));
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
