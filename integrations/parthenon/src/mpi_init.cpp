// MPI_Init through MPI's profiling interface: asks for MPI_THREAD_SERIALIZED where the
// caller asked for MPI_THREAD_SINGLE.
//
// Parthenon calls plain MPI_Init, then runs its tasks (and so their MPI calls: its own
// boundary exchange and reductions, and Tributary's polls) on a worker thread of its
// thread pool while the main thread waits, and makes MPI calls from the main thread
// between task collections: calls from more than one thread, one at a time. The MPI
// standard calls that MPI_THREAD_SERIALIZED; Tributary checks the level MPI provides and
// refuses polls from a thread other than the Context's below it. Linking this object into
// the executable (cmake/TributaryParthenon.cmake does, unless
// TRIBUTARY_PARTHENON_MPI_INIT=OFF) makes the level true without changing Parthenon: the
// executable's definition of MPI_Init comes before the MPI library's, and PMPI_Init_thread
// is the library's own entry point. An application whose main calls
// MPI_Init_thread(..., MPI_THREAD_SERIALIZED, ...) itself before ParthenonInitEnv (which
// then skips MPI_Init) does not need it.
#include <mpi.h>

#include <cstdio>

extern "C" int MPI_Init(int* argc, char*** argv) {
  int provided = MPI_THREAD_SINGLE;
  const int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
  if (rc == MPI_SUCCESS && provided < MPI_THREAD_SERIALIZED) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      std::fprintf(stderr,
                   "Tributary: MPI_Init asked this MPI library for MPI_THREAD_SERIALIZED and got "
                   "level %d; reductions polled from Parthenon's worker thread will be refused\n",
                   provided);
  }
  return rc;
}
