// The exact-sum encoding (Determinism::rank_count_independent, Sum over float or double):
// this rank's terms travel as records of a window of digits that the ranks agree on
// (ExactWindow), combined by exact multiword addition, so that every schedule and every
// order gives the same sum; each element is rounded once at the end.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/exact/exact_encoding.hpp> is internal to Tributary: include <tributary/exact_sum.hpp> instead"
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "tributary/detail/core/message_spec.hpp"
#include "tributary/detail/exact/exact_kernels.hpp"
#include "tributary/detail/exact/exact_window.hpp"
#include "tributary/exact_sum.hpp"

namespace tributary::detail {

/// The terms one rank adds per element in one generation: one value per element (a
/// hand-wired start, or one list of values), one merged ExactSum per element (partials
/// folded on the device), or per list its values or its ExactSum partials.
template <class E>
struct ExactTerms {
  std::size_t count = 0;
  const E* single = nullptr;
  const ExactSum* merged = nullptr;
  std::vector<const E*> values;           // per list: its values, or null where ...
  std::vector<const ExactSum*> partials;  // ... it gave ExactSum partials instead
  /// Terms per element on this rank: the lists, or 1 for one value or merged partial.
  int Terms() const noexcept { return single || merged ? 1 : static_cast<int>(values.size()); }
};

/// The record writer of merged partials, shared by ExactEncoding and Batch's exact members:
/// widens `needs` by the bits of `count` accumulators (one term per element)...
inline void MeasureSums(const ExactSum* sums, std::size_t count, WindowNeeds* needs) noexcept {
  for (std::size_t k = 0; k < count; ++k)
    WidenRange(sums[k], &needs->lo, &needs->hi, &needs->special);
}
/// ... and writes them as records of window `w` (`acc`: scratch, resized to w.digits).
inline void WriteSumRecords(const ExactSum* sums, std::size_t count, const ExactWindow& w,
                            std::uint32_t* records, std::vector<std::int64_t>* acc) {
  acc->resize(static_cast<std::size_t>(w.digits));
  for (std::size_t k = 0; k < count; ++k) {
    std::fill(acc->begin(), acc->end(), 0);
    unsigned flags = 0;
    DepositWindow(acc->data(), w, sums[k], &flags);
    StoreWindow(records + k * w.Words(), acc->data(), w, flags);
  }
}

template <class E>
class ExactEncoding final : public WindowCodec {
  static_assert(std::is_same_v<E, double> || std::is_same_v<E, float>,
                "exact sums are of float or double");

 public:
  ExactEncoding() = default;
  ExactEncoding(ExactEncoding&&) noexcept = default;

  /// Refills this generation's terms (ExactTerms) for `count` elements.
  ExactTerms<E>& Begin(std::size_t count) {
    terms_.count = count;
    terms_.single = nullptr;
    terms_.merged = nullptr;
    terms_.values.clear();
    terms_.partials.clear();
    return terms_;
  }

  /// Describes the launch of the terms given to Begin: `result` receives the rounded
  /// values where the records are final when written (null: this rank does not receive the
  /// result, a reduce's other ranks); `allreduce`: the collective may speculate on the
  /// window agreed before.
  void Describe(LaunchSpec* spec, E* result, bool allreduce, int rank, int ranks) {
    spec->payload.commutative = true;
    spec->builtin_op = false;
    spec->window = this;
    spec->packed = message_.Layout();
    result_ = result;
    allreduce_ = allreduce;
    ranks_ = ranks;
    prepacked_ = false;
    message_.Reset(0, rank);
  }

  /// After completion on a rank that receives the result: the rounded values, or null when
  /// they were rounded into `result` already.
  const E* Rounded() const noexcept { return rounded_in_result_ ? nullptr : rounded_.data(); }
  std::size_t Count() const noexcept { return terms_.count; }

  WindowNeeds Measure() const override {
    WindowNeeds needs = NoBits(terms_.Terms());
    const auto widen = [&needs](const E* in, std::size_t count) {
      if constexpr (std::is_same_v<E, double>)
        if (WidenRangeKernel(in, count, &needs.lo, &needs.hi, &needs.special)) return;
      for (std::size_t k = 0; k < count; ++k)
        WidenRange(static_cast<double>(in[k]), &needs.lo, &needs.hi, &needs.special);
    };
    if (terms_.merged) {
      MeasureSums(terms_.merged, terms_.count, &needs);
    } else if (terms_.single) {
      widen(terms_.single, terms_.count);
    } else {
      for (std::size_t i = 0; i < terms_.values.size(); ++i) {
        if (const ExactSum* parts = terms_.partials[i])
          for (std::size_t k = 0; k < terms_.count; ++k)
            WidenRange(parts[k], &needs.lo, &needs.hi, &needs.special);
        else
          widen(terms_.values[i], terms_.count);
      }
    }
    return needs;
  }

  // Per element the exact sum of this rank's terms (values added exactly, ExactSum
  // partials merged) as a window record.
  PackedRecords Pack(const WindowNeeds& agreed, bool speculative) override {
    if (!speculative) {
      agreed_ = agreed;
      have_agreed_ = true;
    }
    const ExactWindow w = WindowFor(agreed.lo, agreed.hi, agreed.terms, agreed.special);
    const bool kept = prepacked_ && !speculative && w.first == window_.first &&
                      w.digits == window_.digits && w.flags == window_.flags;
    prepacked_ = false;
    if (kept) return {message_.Data(), RoundedTarget(false)};  // written in this window already
    const std::size_t n = terms_.count, words = w.Words();
    std::uint32_t* records = RecordsFor(w, n + (speculative ? 1 : 0));
    std::uint32_t* trailer = records + n * words;
    if (speculative) std::fill(trailer, trailer + words, 0u);
    const PackedRecords done{message_.Data(), RoundedTarget(speculative)};
    const auto misfit = [&] {
      trailer[0] = 1;
      std::fill(records, trailer, 0u);
      return done;
    };
    if (speculative && std::int64_t(std::max(1, terms_.Terms())) * ranks_ > agreed.terms)
      return misfit();
    if constexpr (std::is_same_v<E, double>) {
      // One value per element: written (and checked) four at a time where the CPU can.
      if (const E* single = SingleSource()) {
        WindowFit fit;
        fit.hi = agreed.hi;
        if (DepositKernel(single, n, window_.first, window_.flags ? 0 : window_.digits, records,
                          speculative ? &fit : nullptr)) {
          if (!fit.fits) return misfit();
          return done;
        }
      }
    }
    if (speculative) {
      const WindowNeeds mine = Measure();
      if (!InsideWindow(mine, agreed)) return misfit();
    }
    PackRecords(records);
    return done;
  }

  PackedRecords Prepack(const WindowNeeds& guess, WindowNeeds* measured) override {
    if constexpr (std::is_same_v<E, double>) {
      // From this many values of one per element, the records are written while measured
      // (instead of speculating), and rounded straight into the result.
      constexpr std::size_t kPrepackFrom = 8192;
      const E* single = SingleSource();
      if (terms_.count < kPrepackFrom || !single) return {};
      const ExactWindow w = WindowFor(guess.lo, guess.hi, guess.terms, guess.special);
      if (w.flags) return {};
      const std::size_t n = terms_.count;
      std::uint32_t* records = RecordsFor(w, n);
      WindowNeeds mine = NoBits(terms_.Terms());
      if (!DepositMeasuringKernel(single, n, w.first, w.digits, records, &mine.lo, &mine.hi,
                                  &mine.special))
        return {};
      prepacked_ = true;
      *measured = mine;
      return {message_.Data(), RoundedTarget(false)};
    } else {
      (void)guess, (void)measured;
      return {};
    }
  }

  const WindowNeeds* Guess() const noexcept override {
    return have_agreed_ && allreduce_ ? &agreed_ : nullptr;
  }

  bool RecordsOnly() const noexcept override { return true; }

  /// The records' storage where it starts at `at` (PackedMessage::Leave).
  std::unique_ptr<KeptBuffer> Leave(const void* at) noexcept { return message_.Leave(at); }

  Finisher Rounding() const noexcept override {
    Finisher f;
    f.fn = &RoundThunk;
    f.combine_fn = &RoundSumThunk;
    f.state = this;
    f.out_size = sizeof(E);
    return f;
  }

 private:
  // What a rank with no nonzero finite term needs of the window, `terms` per element.
  static WindowNeeds NoBits(int terms) {
    WindowNeeds needs;
    needs.lo = std::int64_t(1) << 40;  // above any bit
    needs.terms = std::max(1, terms);
    return needs;
  }

  const E* SingleSource() const noexcept {
    if (terms_.single) return terms_.single;
    if (terms_.merged || terms_.values.size() != 1 || terms_.partials[0]) return nullptr;
    return terms_.values[0];
  }

  // Sizes the message for `count` records of window `w` and describes it; returns where
  // the records go.
  std::uint32_t* RecordsFor(const ExactWindow& w, std::size_t count) {
    window_ = w;
    auto* body = message_.Reset(count * window_.RecordBytes(), message_.Layout()->rank);
    message_.SetSegment(count, window_.RecordBytes(), WindowCombineFor(window_), &window_);
    return reinterpret_cast<std::uint32_t*>(body);
  }

  // Where the rounded values go: the result itself where this rank receives it and the
  // records are final once written; otherwise (a speculative generation, which may be
  // packed again from the same values, or a rank that does not receive the result)
  // rounded_, with room for the count of misfits.
  void* RoundedTarget(bool speculative) {
    rounded_in_result_ = !speculative && result_ != nullptr;
    if (rounded_in_result_) return result_;
    rounded_.resize(terms_.count + 1);
    return rounded_.data();
  }

  // The records of this rank's terms in window_ (which they fit).
  void PackRecords(std::uint32_t* records) {
    const std::size_t n = terms_.count, words = window_.Words();
    const std::size_t lists = terms_.values.size();
    const E* source = SingleSource();
    const bool values_only =
        !terms_.merged && (source || std::none_of(terms_.partials.begin(), terms_.partials.end(),
                                                  [](const ExactSum* p) { return p; }));
    if (window_.digits <= kShortWindow && values_only) {  // one 128-bit word per element
      // Locals, not members: the records' stores could otherwise alias the window.
      const ExactWindow win = window_;
      const E* const* values = terms_.values.data();
      WithShortForm(win, [&](auto form) {
        using Form = decltype(form);
        for (std::size_t k = 0; k < n; ++k) {
          WindowWord sum = 0;
          unsigned flags = 0;
          if (source) {
            DepositShort(&sum, win, static_cast<double>(source[k]), &flags);
          } else {
            for (std::size_t i = 0; i < lists; ++i)
              DepositShort(&sum, win, static_cast<double>(values[i][k]), &flags);
          }
          StoreShort<Form>(records + k * Form::kWords, sum, flags);
        }
      });
      return;
    }
    std::vector<std::int64_t> acc(static_cast<std::size_t>(window_.digits));
    if (terms_.merged) {
      WriteSumRecords(terms_.merged, n, window_, records, &acc);
      return;
    }
    for (std::size_t k = 0; k < n; ++k) {
      std::fill(acc.begin(), acc.end(), 0);
      unsigned flags = 0;
      if (source) {
        DepositWindow(acc.data(), window_, static_cast<double>(source[k]), &flags);
      } else {
        for (std::size_t i = 0; i < lists; ++i) {
          if (const ExactSum* parts = terms_.partials[i])
            DepositWindow(acc.data(), window_, parts[k], &flags);
          else
            DepositWindow(acc.data(), window_, static_cast<double>(terms_.values[i][k]), &flags);
        }
      }
      StoreWindow(records + k * words, acc.data(), window_, flags);
    }
  }

  // The Finisher's combine and rounding in one pass (three-digit records of doubles, where
  // the CPU has the kernels); false otherwise, before writing anything.
  static bool RoundSumThunk(const void* self, const void* in, const void* inout, void* out,
                            std::size_t first, std::size_t count) noexcept {
    if constexpr (std::is_same_v<E, double>) {
      const auto& me = *static_cast<const ExactEncoding*>(self);
      const ExactWindow w = me.window_;
      const auto* a = static_cast<const std::uint32_t*>(in);
      const auto* b = static_cast<const std::uint32_t*>(inout);
      const bool trailer = first + count > me.terms_.count;
      if (trailer) --count;
      if (!RoundSumKernel(a, b, count, w.first, w.flags ? 0 : w.digits, static_cast<E*>(out)))
        return false;
      if (trailer) {  // the count of misfits: the low digits' sum
        const std::uint32_t misfits = a[count * w.Words()] + b[count * w.Words()];
        std::memcpy(static_cast<E*>(out) + count, &misfits, sizeof misfits);
      }
      return true;
    } else {
      (void)self, (void)in, (void)inout, (void)out, (void)first, (void)count;
      return false;
    }
  }

  // Records [first, first + count) rounded once to E; a speculative generation's last
  // record (its count of misfits) is copied as it is.
  static void RoundThunk(const void* self, const void* in, void* out, std::size_t first,
                         std::size_t count) noexcept {
    const auto& me = *static_cast<const ExactEncoding*>(self);
    const ExactWindow w = me.window_;
    const auto* records = static_cast<const std::uint32_t*>(in);
    E* values = static_cast<E*>(out);
    if (first + count > me.terms_.count) {
      --count;
      std::memcpy(values + count, records + count * w.Words(), sizeof(std::uint32_t));
    }
    if constexpr (std::is_same_v<E, double>)
      if (RoundKernel(records, count, w.first, w.flags ? 0 : w.digits, values)) return;
    if (w.digits <= kShortWindow) {
      WithShortForm(w, [&](auto form) {
        using Form = decltype(form);
        for (std::size_t k = 0; k < count; ++k)
          values[k] = RoundShort<E, Form>(records + k * Form::kWords, w.first);
      });
    } else {
      for (std::size_t k = 0; k < count; ++k)
        values[k] = RoundWindow<E>(records + k * w.Words(), w);
    }
  }

  ExactTerms<E> terms_;
  PackedMessage message_;
  ExactWindow window_;
  WindowNeeds agreed_;  // the last window the ranks agreed on (have_agreed_)
  bool have_agreed_ = false;
  bool allreduce_ = false;
  int ranks_ = 1;
  bool prepacked_ = false;          // the records were written in window_ before the agreement
  bool rounded_in_result_ = false;  // the finisher writes the rounded values into result_
  E* result_ = nullptr;
  std::vector<E> rounded_;  // the rounded values where not result_ (RoundedTarget)
};

}  // namespace tributary::detail
