// With the default failure policy a failed task on one rank prints the report and aborts
// every rank: the others, which wait in a reduction, do not hang.
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
    tributary::AllReduce<int> r(ctx);
    const int bad = ctx.Size() - 1;
    tributary::TaskCollection tc;
    auto& region = tc.AddRegion(1);
    r.Expect(1, tributary::Sum{});
    auto work = region[0].AddTask(tributary::TaskID(), "compute fluxes", [&] {
      return ctx.Rank() == bad ? tributary::TaskStatus::fail : tributary::TaskStatus::complete;
    });
    auto c = region[0].AddTask(work, [&] { return r.Contribute(0, 1); });
    region[0].AddTask(c, [&] { return r.CheckReduce(); });
    ctx.Execute(tc);
  }
  std::printf("not reached: the failed task did not abort the job\n");
  return 0;
}
