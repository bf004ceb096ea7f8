// The README's loop as written, on a rank with no blocks: `step.Expect(num_blocks)` with
// num_blocks = 0 there, a region of no lists, and the executor's run. After each run every
// rank -- the one without blocks too -- holds the cycle's results in `dt.val` and
// `mass.val`, as a driver that reads them after Execute expects; no rank aborts or hangs,
// cycle after cycle. The rank without blocks is rank 1 (rank 0 alone on one rank).
//   --executor=serial|threaded|foreign [--cycles=N]. Exits 0 when every cycle was right on
//   every rank, else 1.
#include <string>
#include <vector>

#include "outside_support.hpp"

namespace {

using outside::Rank;
using outside::Size;
using tributary::TaskStatus;
constexpr const char* kProgram = "empty_rank";

int Blocks(int rank) { return rank == (Size() > 1 ? 1 : 0) ? 0 : 2 + rank % 2; }
double BlockDt(int cycle, int rank, int b) { return 0.5 + 0.25 * ((cycle + 3 * rank + b) % 7); }
double BlockMass(int cycle, int rank, int b) { return 1.0 + cycle + rank + b; }

}  // namespace

int main(int argc, char** argv) {
  const std::string executor = outside::Arg(argc, argv, "executor", "serial");
  const int ncycles = std::stoi(outside::Arg(argc, argv, "cycles", "6"));
  int provided = 0;
  MPI_Init_thread(&argc, &argv, executor == "serial" ? MPI_THREAD_SINGLE : MPI_THREAD_SERIALIZED,
                  &provided);
  int wrong = 0;
  {
    tributary::Context ctx;
    tributary::Batch step(ctx, "step");
    auto& dt = step.Add<double>(tributary::Min{}, "dt");
    auto& mass = step.Add<double>(tributary::Sum{}, "mass");
    const int num_blocks = Blocks(Rank());
    outside::Pool pool(2);
    for (int cycle = 0; cycle < ncycles; ++cycle) {
      step.Expect(num_blocks);  // contributions expected on this rank (may be 0)
      std::vector<std::vector<outside::Task>> lists(static_cast<std::size_t>(num_blocks));
      for (int b = 0; b < num_blocks; ++b) {
        auto& tl = lists[static_cast<std::size_t>(b)];
        tl.push_back([&, b, cycle] {
          dt.Contribute(b, BlockDt(cycle, Rank(), b));
          return mass.Contribute(b, BlockMass(cycle, Rank(), b));
        });
        tl.push_back([&] { return step.CheckReduce(); });
      }
      if (executor == "foreign") {
        tributary::ForeignCycle declared;
        pool.Run(lists);
      } else {
        tributary::TaskCollection tc;
        auto& region = tc.AddRegion(num_blocks);  // one task list per block
        for (int b = 0; b < num_blocks; ++b) {
          tributary::TaskID prev;
          for (auto& task : lists[static_cast<std::size_t>(b)])
            prev = region[b].AddTask(prev, task);
        }
        if (executor == "threaded") {
          tributary::ThreadedExecutor threaded(2);
          ctx.Execute(tc, threaded);
        } else {
          ctx.Execute(tc);
        }
      }
      // The driver reads the results on every rank.
      double want_dt = tributary::Min::Identity<double>(), want_mass = 0;
      for (int r = 0; r < Size(); ++r)
        for (int b = 0; b < Blocks(r); ++b) {
          want_dt = std::min(want_dt, BlockDt(cycle, r, b));
          want_mass += BlockMass(cycle, r, b);
        }
      if (dt.val != want_dt || mass.val != want_mass) {
        ++wrong;
        outside::Say(kProgram, "cycle " + std::to_string(cycle) + ": dt " + std::to_string(dt.val) +
                                   " mass " + std::to_string(mass.val) + ", expected " +
                                   std::to_string(want_dt) + " and " + std::to_string(want_mass));
      }
    }
  }
  outside::Say(kProgram, std::to_string(ncycles - wrong) + " of " + std::to_string(ncycles) +
                             " cycles right (" + executor + ", " + std::to_string(Blocks(Rank())) +
                             " blocks here)");
  const bool all = outside::AllTrue(wrong == 0);
  MPI_Finalize();
  return all ? 0 : 1;
}
