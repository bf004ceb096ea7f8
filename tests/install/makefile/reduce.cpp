// Built by a plain Makefile through pkg-config: a regional sum and a batch over task lists.
#include <cstdio>
#include <tributary/tributary.hpp>

int main(int argc, char** argv) {
#if TRIBUTARY_HAVE_MPI
  MPI_Init(&argc, &argv);
#else
  (void)argc;
  (void)argv;
#endif
  int rc = 1;
  {
    tributary::Context ctx;
    tributary::Batch step(ctx, "step");
    auto& count = step.Add<long>(tributary::Sum{}, "count");
    auto& low = step.Add<double>(tributary::Min{}, "low");
    const int lists = 3;
    step.Expect(lists);
    tributary::TaskCollection tc;
    auto& region = tc.AddRegion(lists);
    for (int i = 0; i < lists; ++i) {
      auto c = region[i].AddTask(tributary::TaskID(), [&, i] {
        count.Contribute(i, 1L);
        return low.Contribute(i, 10.0 * ctx.Rank() + i);
      });
      region[i].AddTask(c, [&] { return step.CheckReduce(); });
    }
    const bool ok = ctx.Execute(tc) == tributary::TaskStatus::complete &&
                    count.val == 1L * lists * ctx.Size() && low.val == 0.0;
    rc = ok ? 0 : 1;
    if (ctx.Rank() == 0)
      std::printf("reduce: count = %ld, min = %g on %d rank(s): %s\n", count.val, low.val,
                  ctx.Size(), ok ? "OK" : "WRONG");
  }
#if TRIBUTARY_HAVE_MPI
  MPI_Finalize();
#endif
  return rc;
}
