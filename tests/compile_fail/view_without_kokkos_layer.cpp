// Must not compile: a View contributed with only tributary/tributary.hpp included stops at
// a static_assert that names tributary/kokkos.hpp (not at the linker).
#include <Kokkos_Core.hpp>

#include "tributary/tributary.hpp"

void Contribute(tributary::Context& ctx, const Kokkos::View<double*>& data) {
  tributary::AllReduce<double> r(ctx);
  r.Expect(1, tributary::Sum{});
  r.ContributeView(0, data, tributary::Sum{});
}
