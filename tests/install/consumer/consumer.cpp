// Uses the installed headers and libraries: a batch reduction inside a task region.
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
    tributary::AllReduce<long> count(ctx, "count");
    tributary::TaskCollection tc;
    auto& region = tc.AddRegion(2);
    count.Expect(2, tributary::Sum{});
    for (int i = 0; i < 2; ++i) {
      auto c = region[i].AddTask(tributary::TaskID(), [&, i] { return count.Contribute(i, 1L); });
      region[i].AddTask(c, [&] { return count.CheckReduce(); });
    }
    if (ctx.Execute(tc) == tributary::TaskStatus::complete && count.val == 2L * ctx.Size()) rc = 0;
    if (ctx.Rank() == 0)
      std::printf("consumer: count = %ld on %d rank(s): %s\n", count.val, ctx.Size(),
                  rc ? "WRONG" : "OK");
  }
#if TRIBUTARY_HAVE_MPI
  MPI_Finalize();
#endif
  return rc;
}
