// Creates a Context with the default options, runs one allreduce of a double through it and
// destroys it: what every Tributary program does first (`--mpi-only`: one MPI_Allreduce
// and no Context, the baseline). Run under plain smpirun (SMPI's
// default settings and collective selector) by the smpi test label at 256 ranks, and by
// hand at 1024 and 4096 (docs/simulation.md, "Starting a Context"). Rank 0 prints the
// simulated seconds the Context took to create and the communicators it made.
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "tributary/tributary.hpp"

namespace {
double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// glibc's mallinfo2, declared here: <malloc.h> clashes with the allocation macros SMPI forces
// into every file.
struct HeapInfo {
  std::size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};
extern "C" HeapInfo mallinfo2();

// Bytes in use on the heap and resident, of the whole process: under SMPI every simulated
// rank is in it, so the growth across a barrier-to-barrier phase is what all ranks took.
struct Memory {
  double heap = 0, anonymous = 0, file = 0;  // RssAnon, RssFile (the ranks' copies of the program)
};
Memory Now() {
  Memory m;
  const HeapInfo h = mallinfo2();
  m.heap = static_cast<double>(h.uordblks + h.hblkhd);
  std::ifstream status("/proc/self/status");
  std::string key;
  double kib = 0;
  while (status >> key)
    if (key == "RssAnon:" && status >> kib)
      m.anonymous = kib * 1024;
    else if (key == "RssFile:" && status >> kib)
      m.file = kib * 1024;
  return m;
}
// The two-level form over the simulated hosts, whatever the host file's layout: an
// allreduce and a reduce to every root, every answer checked on every rank. Run by the smpi
// label with nodes that are blocks of ranks (the last one smaller) and with ranks dealt to
// the nodes in turn (no node a range of ranks: the layout keeps a table of every rank's node).
bool NodeAware(int rank, int size) {
  tributary::ContextOptions o;
  o.schedule_params.node_aware = true;
  o.allreduce_schedule = tributary::ScheduleKind::recursive_doubling;
  o.reduce_schedule = tributary::ScheduleKind::binomial;
  tributary::Context ctx(o);
  tributary::AllReduce<std::vector<long>> all(ctx, "all");
  tributary::Reduce<std::vector<long>> to_root(ctx, "to root");
  const long expect = static_cast<long>(size) * (size + 1) / 2;
  bool ok = true;
  all.val.assign(3, rank + 1);
  all.StartReduce(tributary::Sum{});
  ctx.Wait(all);
  for (long v : all.val) ok = ok && v == expect;
  for (int root = 0; root < size; ++root) {
    to_root.val.assign(3, rank + 1);
    to_root.StartReduce(root, tributary::Sum{});
    ctx.Wait(to_root);
    if (rank == root)
      for (long v : to_root.val) ok = ok && v == expect;
  }
  int mine = ok ? 1 : 0, every = 0;
  MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("context_startup: %d ranks on %d node(s), at most %d per node: node-aware %s\n",
                size, ctx.NodeCount(), ctx.Facts().ranks_per_node, every ? "correct" : "WRONG");
  return every != 0;
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
  if (argc > 1 && std::strcmp(argv[1], "--node-aware") == 0) {
    ok = NodeAware(rank, size) ? 1 : 0;
    MPI_Finalize();
    return ok ? 0 : 1;
  }
  MPI_Barrier(MPI_COMM_WORLD);  // SMPI's view of the nodes is made here, not counted below
  const auto wall = std::chrono::steady_clock::now();
  {
    const Memory before = Now();
    const double t0 = MPI_Wtime();
    tributary::Context ctx;
    const double created = MPI_Wtime() - t0;
    const double created_wall = Since(wall);
    MPI_Barrier(MPI_COMM_WORLD);
    const Memory after = Now();
    tributary::AllReduce<double> r(ctx, "one");
    r.val = 1.0;
    r.StartReduce(tributary::Sum{});
    ctx.Wait(r);
    ok = r.val == size ? 1 : 0;
    if (rank == 0)
      std::printf(
          "context_startup: %d ranks, %d node(s): Context created in %.6f simulated s "
          "(%.2f s of wall time), %d communicator(s); allreduce %s; %.2f s of wall time; "
          "per rank the process grew by %.0f B of heap, %.0f B of anonymous and %.0f B of "
          "file-backed resident memory\n",
          size, ctx.Facts().node_count, created, created_wall, ctx.CommunicatorsCreated(),
          ok ? "correct" : "WRONG", Since(wall), (after.heap - before.heap) / size,
          (after.anonymous - before.anonymous) / size, (after.file - before.file) / size);
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
