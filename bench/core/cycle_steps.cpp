// One AllReduce<double> per cycle, N cycles, for an instruction profile of each step
// (scripts/profile-cycle.sh runs it under callgrind): no timing harness, no barrier, so that
// what a profile counts is the cycle itself.
//
//   mpiexec -n 2 cycle_steps raw|tree|library [cycles]
//     raw      MPI_Iallreduce + an MPI_Test loop on a duplicate of MPI_COMM_WORLD
//     tree     the task-engine cycle (Expect, a contribute task, a check task, Execute) on the
//              built-in tree's schedule
//     library  the same cycle with the MPI library's schedule forced
//     length-none, length-basic
//              AllReduce<std::vector<double>> of one element, StartReduce and a CheckReduce
//              loop on the MPI library's schedule, at DebugLevel::none or basic (the length
//              check riding in one element more)
// Rank 0 prints the cycles and the MPI_Test calls per cycle (counted here, through PMPI).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "tributary/tributary.hpp"

namespace {
long g_tests = 0;
}  // namespace

extern "C" int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  ++g_tests;
  return PMPI_Test(request, flag, status);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string variant = argc > 1 ? argv[1] : "library";
  const long cycles = argc > 2 ? std::atol(argv[2]) : 5000;
  const bool length = variant == "length-none" || variant == "length-basic";
  if (variant != "raw" && variant != "tree" && variant != "library" && !length) {
    std::fprintf(stderr, "usage: cycle_steps raw|tree|library|length-none|length-basic [cycles]\n");
    MPI_Finalize();
    return 2;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm raw;
  MPI_Comm_dup(MPI_COMM_WORLD, &raw);
  int status = 0;
  {
    tributary::ContextOptions o;
    if (variant == "library" || length) o.allreduce_schedule = tributary::ScheduleKind::mpi_library;
    if (length) o.communicator_pool = 2;  // the vector's object is the second
    if (length)
      o.debug =
          variant == "length-basic" ? tributary::DebugLevel::basic : tributary::DebugLevel::none;
    tributary::Context ctx(o);
    tributary::AllReduce<double> a(ctx, "cycle");
    // Only in the length variants: an idle second object would change the others' profile.
    std::optional<tributary::AllReduce<std::vector<double>>> v;
    if (length) v.emplace(ctx, "length");
    tributary::TaskCollection tc;
    auto& list = tc.AddRegion(1)[0];
    auto contribute = list.AddTask(tributary::TaskID(), [&] { return a.Contribute(0, 1.0); });
    list.AddTask(contribute, [&] { return a.CheckReduce(); });
    tributary::SerialExecutor ex;
    double value = 0;
    const auto cycle = [&] {
      if (variant == "raw") {
        value = 1.0;
        MPI_Request req;
        MPI_Iallreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, raw, &req);
        int done = 0;
        while (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      } else if (length) {
        v->val.assign(1, 1.0);
        v->StartReduce(tributary::Sum{});
        while (v->CheckReduce() != tributary::TaskStatus::complete) {
        }
        value = v->val[0];
      } else {
        a.Expect(1, tributary::Sum{});
        ctx.Execute(tc, ex);
        value = a.val;
      }
    };
    for (long i = 0; i < cycles; ++i) {
      cycle();
      if (value != size) status = 1;
    }
    if (rank == 0)
      std::printf("cycle_steps %s: %ld cycles at %d ranks, %.2f MPI_Test calls per cycle%s\n",
                  variant.c_str(), cycles, size, static_cast<double>(g_tests) / cycles,
                  status ? ", WRONG RESULT" : "");
  }
  MPI_Comm_free(&raw);
  MPI_Finalize();
  return status;
}
