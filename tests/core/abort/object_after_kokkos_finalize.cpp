// An object that holds a Kokkos::View and outlives Kokkos::finalize is reported through its
// Context's error handler (a recording handler here; the default aborts).
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "tributary/kokkos.hpp"

int main(int argc, char** argv) {
#if TRIBUTARY_HAVE_MPI
  MPI_Init(&argc, &argv);
#endif
  std::string reported;
  {
    tributary::ContextOptions options;
    options.error_handler = [&](const std::string& m) { reported = m; };
    tributary::Context ctx(options);
    Kokkos::initialize(argc, argv);
    auto r = std::make_unique<tributary::AllReduce<Kokkos::View<double*, Kokkos::HostSpace>>>(
        ctx, "late view");
    r->val = Kokkos::View<double*, Kokkos::HostSpace>("v", 4);
    Kokkos::finalize();
    r.reset();
  }
#if TRIBUTARY_HAVE_MPI
  MPI_Finalize();
#endif
  if (reported.find("destroyed after Kokkos::finalize") == std::string::npos) {
    std::printf("FAIL: nothing reported\n");
    return 1;
  }
  std::printf("PASS: %s\n", reported.c_str());
  return 0;
}
