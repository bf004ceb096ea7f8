// Creates a Context with the default options, runs one allreduce of a double through it and
// destroys it: what every Tributary program does first (`--mpi-only`: one MPI_Allreduce
// and no Context, the baseline). Run under plain smpirun (SMPI's
// default settings and collective selector) by the smpi test label at 256 ranks, and by
// hand at 1024 and 4096 (docs/simulation.md, "Starting a Context"). Rank 0 prints the
// simulated seconds the Context took to create and the communicators it made.
#include <chrono>
#include <cstdio>
#include <cstring>

#include "tributary/tributary.hpp"

namespace {
double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ok = 0;
  if (argc > 1 && std::strcmp(argv[1], "--mpi-only") == 0) {  // the baseline: no Context
    const auto wall = std::chrono::steady_clock::now();
    double one = 1.0, sum = 0.0;
    MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    ok = sum == size ? 1 : 0;
    if (rank == 0)
      std::printf("context_startup: %d ranks, no Context: MPI_Allreduce %s; %.2f s of wall time\n",
                  size, ok ? "correct" : "WRONG", Since(wall));
    MPI_Finalize();
    return ok ? 0 : 1;
  }
  const auto wall = std::chrono::steady_clock::now();
  {
    const double t0 = MPI_Wtime();
    tributary::Context ctx;
    const double created = MPI_Wtime() - t0;
    const double created_wall = Since(wall);
    tributary::AllReduce<double> r(ctx, "one");
    r.val = 1.0;
    r.StartReduce(tributary::Sum{});
    ctx.Wait(r);
    ok = r.val == size ? 1 : 0;
    if (rank == 0)
      std::printf(
          "context_startup: %d ranks, %d node(s): Context created in %.6f simulated s "
          "(%.2f s of wall time), %d communicator(s); allreduce %s; %.2f s of wall time\n",
          size, ctx.Facts().node_count, created, created_wall, ctx.CommunicatorsCreated(),
          ok ? "correct" : "WRONG", Since(wall));
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
