// hello_reduce: the smallest useful Tributary program.
//
// Every rank owns a few "blocks" of a 1-D domain (a different number on each rank, and
// possibly none). Each block is a task list. Every step, each list computes its block's
// stable time step and conserved total, contributes them to one batch (a Min and a Sum
// that travel in one message), polls the batch, and then advances its block with the
// global time step. The program checks that the total is conserved and exits non-zero if
// anything is wrong.
//
//   mpiexec -n 4 ./hello_reduce [steps]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../command_line.hpp"
#include "tributary/tributary.hpp"

namespace {

struct Block {
  std::vector<double> u;  // cell values
  double dx = 0.0;
};

}  // namespace

int main(int argc, char** argv) {
#if TRIBUTARY_HAVE_MPI
  MPI_Init(&argc, &argv);
#endif
  int steps = 5;
  CLI::App app{"The smallest useful Tributary program: a batch (a Min and a Sum) per step."};
  app.add_option("steps", steps, "Time steps")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  if (const int code = examples::ParseCommandLine(app, argc, argv); code >= 0) {
#if TRIBUTARY_HAVE_MPI
    MPI_Finalize();
#endif
    return code;
  }
  int rc = 0;
  {
    tributary::Context ctx;
    const int rank = ctx.Rank(), size = ctx.Size();

    // Rank r owns (r % 3) + 1 blocks, except that rank 1 of 4 or more owns none.
    const int nblocks = (size >= 4 && rank == 1) ? 0 : rank % 3 + 1;
    std::vector<Block> blocks(static_cast<std::size_t>(nblocks));
    for (int b = 0; b < nblocks; ++b) {
      Block& blk = blocks[static_cast<std::size_t>(b)];
      blk.dx = 1.0 / (16.0 * (1 + b));
      blk.u.resize(16);
      for (int i = 0; i < 16; ++i)
        blk.u[static_cast<std::size_t>(i)] = 1.0 + 0.1 * std::sin(i + rank + b);
    }

    tributary::Batch step(ctx, "step");
    auto& dt = step.Add<double>(tributary::Min{}, "dt");
    auto& total = step.Add<double>(tributary::Sum{}, "total");

    double initial_total = 0.0;
    for (int s = 0; s < steps; ++s) {
      step.Expect(nblocks);
      tributary::TaskCollection tc;
      tributary::TaskRegion& region = tc.AddRegion(nblocks);
      for (int b = 0; b < nblocks; ++b) {
        Block* blk = &blocks[static_cast<std::size_t>(b)];
        auto& tl = region[b];
        auto contribute = tl.AddTask(tributary::TaskID(), "contribute", [&dt, &total, blk, b] {
          double sum = 0.0, umax = 0.0;
          for (double v : blk->u) {
            sum += v * blk->dx;
            umax = std::max(umax, std::abs(v));
          }
          dt.Contribute(b, 0.5 * blk->dx / umax);
          total.Contribute(b, sum);
          return tributary::TaskStatus::complete;
        });
        auto check = tl.AddTask(contribute, "check", [&step] { return step.CheckReduce(); });
        tl.AddTask(check, "advance", [&dt, blk] {
          // A conservative exchange inside the block: move a little mass to the right
          // neighbour cell (periodic within the block), scaled by the global time step.
          const std::size_t n = blk->u.size();
          std::vector<double> flux(n);
          for (std::size_t i = 0; i < n; ++i) flux[i] = dt.val * 0.1 * blk->u[i];
          for (std::size_t i = 0; i < n; ++i) {
            blk->u[i] -= flux[i];
            blk->u[(i + 1) % n] += flux[i];
          }
          return tributary::TaskStatus::complete;
        });
      }
      if (ctx.Execute(tc) != tributary::TaskStatus::complete) rc = 1;
      // A rank without blocks has no task that polls: it waits here for its own copy.
      while (step.CheckReduce() != tributary::TaskStatus::complete) ctx.Progress();
      if (s == 0) initial_total = total.val;
      const double drift = std::abs(total.val - initial_total) / std::abs(initial_total);
      if (rank == 0)
        std::printf("step %d: dt = %.6e  total = %.15e  drift = %.1e\n", s, dt.val, total.val,
                    drift);
      if (drift > 1e-12) rc = 1;
    }
    if (rank == 0)
      std::printf("%s: %d steps on %d ranks, conservation %s\n", rc ? "FAILED" : "OK", steps, size,
                  rc ? "violated" : "holds to 1e-12");
  }
#if TRIBUTARY_HAVE_MPI
  MPI_Finalize();
#endif
  return rc;
}
