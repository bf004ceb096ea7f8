// Data-driven (keyed) collectives: every rank contributes 8 values of one key per cycle and
// every rank receives the total. Known local count (each rank combines its 8 first and sends
// one message) vs unknown local count (each contribution travels on its own and the head
// reducer counts) vs an MPI_Iallreduce of the same data (summed locally first), side by
// side in one run.
#include <cstdio>
#include <string>
#include <vector>

#include "bench_harness.hpp"
#include "tributary/tributary.hpp"

namespace {

namespace tb = tributary::bench;

void Cycle(const tb::Options& o, tributary::Context& ctx, int per_rank) {
  const int p = ctx.Size(), me = ctx.Rank();
  const std::int64_t count = static_cast<std::int64_t>(per_rank) * p;
  const double want = static_cast<double>(count);
  tb::Runner run(MPI_COMM_WORLD,
                 "keyed collective, " + std::to_string(per_rank) + " contributions per rank",
                 "MPI_Iallreduce+MPI_Test", o);
  double raw = 0;
  run.Add(
      "MPI_Iallreduce+MPI_Test",
      [&] {
        raw = 0;
        for (int i = 0; i < per_rank; ++i) raw += 1.0;
        MPI_Request req;
        MPI_Iallreduce(MPI_IN_PLACE, &raw, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
        int done = 0;
        while (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      },
      [&] { return raw == want; });
  tributary::KeyedReduction<double> known(ctx, "known"), unknown(ctx, "unknown");
  tributary::KeyOptions ko;
  ko.count = count;
  ko.local = per_rank;
  run.Add(
      "keyed, local count known",
      [&] {
        known.Declare(1, tributary::Sum{}, ko);
        for (int i = 0; i < per_rank; ++i)
          known.Contribute(1, static_cast<std::int64_t>(me) * per_rank + i, 1.0);
        while (known.Check(1) != tributary::TaskStatus::complete) {
        }
      },
      [&] { return known.Result(1) == want; });
  tributary::KeyOptions uo;
  uo.count = count;
  run.Add(
      "keyed, local count unknown",
      [&] {
        unknown.Declare(1, tributary::Sum{}, uo);
        for (int i = 0; i < per_rank; ++i)
          unknown.Contribute(1, static_cast<std::int64_t>(me) * per_rank + i, 1.0);
        while (unknown.Check(1) != tributary::TaskStatus::complete) {
        }
      },
      [&] { return unknown.Result(1) == want; });
  run.Run(std::to_string(per_rank) + " per rank");
  run.Report();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    tb::Options defaults;
    defaults.iterations = 2000;
    defaults.repetitions = 9;
    defaults.warmup = 200;
    tb::CommandLine cl(
        "Keyed collectives with known and unknown local counts against "
        "MPI_Iallreduce.",
        defaults);
    if (const int code = cl.Parse(argc, argv); code >= 0) {
      MPI_Finalize();
      return code;
    }
    const tb::Options o = cl.options;
    tributary::Context ctx;
    Cycle(o, ctx, 1);
    Cycle(o, ctx, 8);
  }
  MPI_Finalize();
  return 0;
}
