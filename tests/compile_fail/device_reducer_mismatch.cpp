// Must not compile: MinLoc reduces ValueLoc elements, not the doubles of AllReduce<double>.
#include <Kokkos_Core.hpp>

#include "tributary/kokkos.hpp"

void Contribute(tributary::Context& ctx, const Kokkos::View<double*>& data) {
  tributary::AllReduce<double> r(ctx);
  r.Expect(1, tributary::MinLoc{});
  r.ContributeView(0, data, tributary::MinLoc{});
}
