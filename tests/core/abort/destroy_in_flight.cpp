// Destroying a reduction whose network phase is in flight, when another rank never takes
// part in it, is a failure of this rank once the Context's drain time (its watchdog's) has
// passed: by the default policy the report is printed and every rank aborts (no silent
// MPI_Request_free, no hang). Run by CTest at 2 and 3 ranks, which expects the message.
#include <chrono>
#include <cstdio>

#include "tributary/tributary.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    tributary::ContextOptions options;
    options.watchdog = std::chrono::seconds(2);
    tributary::Context ctx(options);
    auto* r = new tributary::AllReduce<double>(ctx, "doomed");
    if (ctx.Rank() == 0) {
      r->val = 1.0;
      r->StartReduce(tributary::Sum{});  // the other ranks never start: rank 0 stays in flight
      delete r;                          // fails after 2 s: the default policy aborts
    }
    std::printf("rank %d waits\n", ctx.Rank());
    std::fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);  // never passes: rank 0 aborted the job
  }
  std::printf("not reached: the in-flight object was destroyed without an error\n");
  return 0;
}
