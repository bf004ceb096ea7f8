// two-dots: a small Parthenon application of Tributary's (integrations/parthenon), built
// against an unchanged Parthenon: two dot products, t.(As) and t.t, of a cell field t and a
// stencil As over the ghost-exchanged field s (as a Krylov solver takes them after its
// matrix-vector product), reduced through one AllReduce of a summable array filled by one
// kernel per partition, as Parthenon's BiCGSTAB takes its dot products since 2025. Its
// package (two_dots.cpp) holds the fields, the value type and the kernels; its driver and
// main (two_dots_driver.cpp) run the exchange and the reduction for a number of cycles and
// print one line that scripts/run-parthenon.sh reads. docs/parthenon.md, "two-dots".
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <memory>
#include <parthenon/driver.hpp>
#include <parthenon/package.hpp>
#include <string>

namespace two_dots {

/// A contiguous container on the pattern of Parthenon's summable arrays (written here, not
/// Parthenon's file): N values side by side, a user-written copy constructor (so not
/// trivially copyable), += for Kokkos::Sum, and the neutral element below.
template <class T, int N>
struct Summable {
  using value_type = T;
  T data_[N];
  KOKKOS_INLINE_FUNCTION Summable() {
    for (int i = 0; i < N; ++i) data_[i] = T(0);
  }
  KOKKOS_INLINE_FUNCTION Summable(const Summable& other) {
    for (int i = 0; i < N; ++i) data_[i] = other.data_[i];
  }
  KOKKOS_INLINE_FUNCTION Summable& operator=(const Summable& other) {
    for (int i = 0; i < N; ++i) data_[i] = other.data_[i];
    return *this;
  }
  KOKKOS_INLINE_FUNCTION T& operator[](int i) { return data_[i]; }
  KOKKOS_INLINE_FUNCTION const T& operator[](int i) const { return data_[i]; }
  KOKKOS_INLINE_FUNCTION T* data() { return data_; }
  KOKKOS_INLINE_FUNCTION const T* data() const { return data_; }
  KOKKOS_INLINE_FUNCTION static constexpr int size() { return N; }
  KOKKOS_INLINE_FUNCTION Summable& operator+=(const Summable& other) {
    for (int i = 0; i < N; ++i) data_[i] += other.data_[i];
    return *this;
  }
};

/// t.(As) and t.t.
using Dots = Summable<parthenon::Real, 2>;

/// The package: fields "t" and "s" (s with ghost cells filled by the exchange), and its
/// parameters from block <two_dots> (form: how a partition's pair reaches the AllReduce;
/// cycles).
std::shared_ptr<parthenon::StateDescriptor> Initialize(parthenon::ParameterInput* pin);

/// Fills t and s with values of many magnitudes that depend on the global cell only (so the
/// same at any decomposition): a rounded sum of their products shows its order in its bits.
void ProblemGenerator(parthenon::Mesh* pm, parthenon::ParameterInput* pin,
                      parthenon::MeshData<parthenon::Real>* md);

/// Parthenon's form, one partition: one parallel_reduce over its blocks with Kokkos::Sum
/// over Dots, both sums in one pass, the pair added with `dots->val += partial` (as
/// Parthenon's DotProductLocal adds its partial).
parthenon::TaskStatus AddPartitionDots(parthenon::MeshData<parthenon::Real>* md,
                                       parthenon::AllReduce<Dots>* dots);

#ifdef TRIBUTARY_PARTHENON_LAYER
/// Tributary's form, one partition: the same kernel as the partition's contribution to the
/// regional combine (ContributeKernel, both sums in one pass, exact per element in
/// rank_count_independent).
parthenon::TaskStatus ContributePartitionDots(parthenon::MeshData<parthenon::Real>* md,
                                              parthenon::AllReduce<Dots>* dots, int partition);
#endif

/// Both sums of this rank's cells summed on the host in long double, for a check of the
/// value (not its bits); the ghost cells must have been exchanged.
void ReferenceDots(parthenon::Mesh* pm, long double* ts, long double* tt);

}  // namespace two_dots

namespace Kokkos {
/// Kokkos::Sum over two_dots::Summable starts from zero.
template <class T, int N>
struct reduction_identity<two_dots::Summable<T, N>> {
  KOKKOS_FORCEINLINE_FUNCTION static two_dots::Summable<T, N> sum() {
    return two_dots::Summable<T, N>();
  }
};
}  // namespace Kokkos
