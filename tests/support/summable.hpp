// A contiguous container written on the pattern of the summable arrays that Parthenon's
// solvers reduce since 2025 (two dot products in one AllReduce): `E data_[N]`, `data()`,
// `size()`, a `value_type`, a user-written copy constructor (so the type is not trivially
// copyable), `operator+=`, and, with Kokkos, a `Kokkos::reduction_identity` so that
// `Kokkos::Sum<SummableArray<E, N>>` reduces it in a user's own kernel. Written here from
// that description; every member also runs in device kernels.
#pragma once

#include <type_traits>

#include "tributary/config.hpp"
#if TRIBUTARY_HAVE_KOKKOS
#include <Kokkos_Core.hpp>
#endif

namespace tributary::testing {

template <class E, int N>
struct SummableArray {
  using value_type = E;
  E data_[N];

  TRIBUTARY_FUNCTION SummableArray() {
    for (int i = 0; i < N; ++i) data_[i] = E(0);
  }
  TRIBUTARY_FUNCTION SummableArray(const SummableArray& other) {
    for (int i = 0; i < N; ++i) data_[i] = other.data_[i];
  }
  TRIBUTARY_FUNCTION SummableArray& operator=(const SummableArray& other) {
    for (int i = 0; i < N; ++i) data_[i] = other.data_[i];
    return *this;
  }
  TRIBUTARY_FUNCTION E& operator[](int i) { return data_[i]; }
  TRIBUTARY_FUNCTION const E& operator[](int i) const { return data_[i]; }
  TRIBUTARY_FUNCTION E* data() { return data_; }
  TRIBUTARY_FUNCTION const E* data() const { return data_; }
  TRIBUTARY_FUNCTION static constexpr int size() { return N; }
  TRIBUTARY_FUNCTION SummableArray& operator+=(const SummableArray& other) {
    for (int i = 0; i < N; ++i) data_[i] += other.data_[i];
    return *this;
  }
};

static_assert(!std::is_trivially_copyable_v<SummableArray<double, 2>>,
              "the pattern's copy constructor is user-written");

}  // namespace tributary::testing

#if TRIBUTARY_HAVE_KOKKOS
namespace Kokkos {
/// The neutral element of Kokkos::Sum over a summable array: every element zero.
template <class E, int N>
struct reduction_identity<tributary::testing::SummableArray<E, N>> {
  KOKKOS_FORCEINLINE_FUNCTION static tributary::testing::SummableArray<E, N> sum() {
    return tributary::testing::SummableArray<E, N>();
  }
};
}  // namespace Kokkos
#endif
