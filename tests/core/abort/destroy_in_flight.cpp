// Destroying a reduction while its network phase is in flight goes to the Context's error
// handler, whose default prints the message and aborts every rank (no silent
// MPI_Request_free). Run by CTest, which expects the message.
#include <cstdio>

#include "tributary/tributary.hpp"

int main(int argc, char** argv) {
#if TRIBUTARY_HAVE_MPI
  MPI_Init(&argc, &argv);
#else
  (void)argc;
  (void)argv;
#endif
  {
    tributary::Context ctx;
    auto* r = new tributary::AllReduce<double>(ctx, "doomed");
    if (ctx.Rank() == 0) {
      r->val = 1.0;
      r->StartReduce(tributary::Sum{});  // the other ranks never start: rank 0 stays in flight
      delete r;                          // the handler aborts here
    }
    std::printf("rank %d waits\n", ctx.Rank());
    std::fflush(stdout);
#if TRIBUTARY_HAVE_MPI
    MPI_Barrier(MPI_COMM_WORLD);  // never passes: rank 0 aborted the job
#endif
  }
  std::printf("not reached: the in-flight object was destroyed without an error\n");
  return 0;
}
