// The lifetime Parthenon gives its reductions, in the order ParthenonManager runs it: MPI_Init
// (plain, as Parthenon calls it; the layer's MPI_Init asks for MPI_THREAD_SERIALIZED), Kokkos,
// reductions polled from a worker thread (as Parthenon's thread pool runs tasks), then
// Kokkos::finalize and MPI_Finalize with handles still alive. Prints PASS on rank 0.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "parthenon_stand_in.hpp"

namespace {

int rank = 0;

void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what);
  std::exit(1);
}

template <class R>
void Wait(R& r) {
  while (r.CheckReduce() != parthenon::TaskStatus::complete) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int provided = MPI_THREAD_SINGLE, size = 1;
  MPI_Query_thread(&provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Require(provided >= MPI_THREAD_SERIALIZED, "MPI_Init did not give MPI_THREAD_SERIALIZED");
#if TRIBUTARY_HAVE_KOKKOS
  Kokkos::initialize(argc, argv);
#endif
  namespace interop = tributary::parthenon_interop;
  // Outlives both finalisations, as a handle in a static or a leaked Params would.
  auto survivor = std::make_unique<parthenon::AllReduce<double>>();
  {
    parthenon::AllReduce<double> scoped;  // destroyed before the finalisations
    scoped.val = 1.0;
    scoped.StartReduce(MPI_SUM);
    Wait(scoped);
    Require(static_cast<double>(scoped.val) == size, "scoped sum");
  }
  // Parthenon's tasks run on a worker thread while the main thread waits.
  std::thread worker([&] {
    survivor->val = 2.0;
    survivor->StartReduce(MPI_SUM);
    Wait(*survivor);
  });
  worker.join();
  Require(static_cast<double>(survivor->val) == 2.0 * size, "sum polled from a worker thread");
#if TRIBUTARY_HAVE_KOKKOS
  auto view = std::make_unique<
      parthenon::AllReduce<Kokkos::View<double*, Kokkos::LayoutRight, Kokkos::HostSpace>>>();
  view->val = Kokkos::View<double*, Kokkos::LayoutRight, Kokkos::HostSpace>("v", 4);
  view->StartReduce(MPI_SUM);
  Wait(*view);
  view->val = decltype(view->val)();  // the handle's own View goes before Kokkos does
  Kokkos::finalize();
  Require(interop::detail::ReleasedByTeardown() == 2, "objects released at Kokkos::finalize");
  bool refused = false;
  try {
    view->StartReduce(MPI_SUM);
  } catch (const tributary::UsageError&) {
    refused = true;
  }
  Require(refused, "a released object refuses a start");
#endif
  Require(interop::ContextAlive(), "the Context lives until MPI_Finalize");
  MPI_Finalize();
  Require(!interop::ContextAlive(), "the Context is torn down inside MPI_Finalize");
#if TRIBUTARY_HAVE_KOKKOS
  Require(interop::detail::ReleasedByTeardown() == 2, "every object released once");
#else
  Require(interop::detail::ReleasedByTeardown() == 1, "the survivor released at MPI_Finalize");
#endif
  survivor.reset();  // after MPI_Finalize: touches no MPI
  if (rank == 0) std::printf("PASS\n");
  return 0;
}
