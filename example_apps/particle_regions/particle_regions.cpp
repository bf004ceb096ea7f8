// particle_regions: particles move through a periodic 1-D domain cut into blocks spread
// over the ranks. Each particle belongs to one of a few regions for life (a tracer group),
// and every step each region's total (of a per-particle quantity) is reduced by a keyed
// collective: the key is the region, the count is the region's number of particles —
// known everywhere — while how many of them sit on a given rank this step is not (they
// cross blocks). Each block's list contributes its particles with their index inside the
// region; the region's owner rank reduces and receives the total, which is checked against
// a direct sum.
//
//   mpiexec -n 4 particle_regions [particles] [regions] [steps]   (defaults: 3000 5 10)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../command_line.hpp"
#include "tributary/tributary.hpp"

namespace {

constexpr int kBlocks = 16;

struct Particle {
  double x0, v;
  int region;
  std::int64_t index;  // its order index inside the region
};

double Position(const Particle& p, int step) {
  const double x = p.x0 + p.v * step;
  return x - std::floor(x);
}

// The quantity a particle carries at a step (an integer, so totals compare exactly).
std::int64_t Quantity(std::int64_t id, int step) { return (id * 37 + step * 11) % 1000; }

}  // namespace

int main(int argc, char** argv) {
#if TRIBUTARY_HAVE_MPI
  MPI_Init(&argc, &argv);
#endif
  int n = 3000, regions = 5, steps = 10;
  CLI::App app{"Per-region particle totals every step through a keyed collective."};
  app.add_option("particles", n, "Particles in all")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("regions", regions, "Regions (keys)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("steps", steps, "Time steps")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  if (const int code = examples::ParseCommandLine(app, argc, argv); code >= 0) {
#if TRIBUTARY_HAVE_MPI
    MPI_Finalize();
#endif
    return code;
  }
  int status = 0;
  {
    tributary::Context ctx;
    const int p = ctx.Size(), me = ctx.Rank();

    // Every rank knows every particle's orbit (a stand-in for migrating particles).
    std::vector<Particle> particles(static_cast<std::size_t>(n));
    std::vector<std::int64_t> per_region(static_cast<std::size_t>(regions), 0);
    for (int i = 0; i < n; ++i) {
      Particle& q = particles[static_cast<std::size_t>(i)];
      q.x0 = std::fmod(i * 0.6180339887498949, 1.0);
      q.v = 0.013 * ((i * 7) % 11 - 5);
      q.region = (i * 13) % regions;
      q.index = per_region[static_cast<std::size_t>(q.region)]++;
    }
    auto owner_of_block = [p](int b) { return b * p / kBlocks; };

    tributary::KeyedReduction<std::int64_t> totals(ctx, "region totals");
    int my_blocks = 0;
    for (int b = 0; b < kBlocks; ++b) my_blocks += owner_of_block(b) == me;
    long long wrong = 0, checked = 0;
    for (int step = 0; step < steps; ++step) {
      for (int r = 0; r < regions; ++r) {
        tributary::KeyOptions o;
        o.count = per_region[static_cast<std::size_t>(r)];  // the local share is unknown
        o.reducers = {r % p};
        o.consumers = {r % p};
        totals.Declare(static_cast<std::uint64_t>(r), tributary::Sum{}, o);
      }
      // One list per block of this rank: contribute the particles in the block, then poll.
      tributary::TaskCollection cycle;
      auto& region = cycle.AddRegion(my_blocks);
      int list = 0;
      for (int b = 0; b < kBlocks; ++b) {
        if (owner_of_block(b) != me) continue;
        region[list++].AddTask(tributary::TaskID(), [&, b, step] {
          for (int i = 0; i < n; ++i) {
            const Particle& q = particles[static_cast<std::size_t>(i)];
            if (static_cast<int>(Position(q, step) * kBlocks) % kBlocks == b)
              totals.Contribute(static_cast<std::uint64_t>(q.region), q.index, Quantity(i, step));
          }
          return tributary::TaskStatus::complete;
        });
      }
      ctx.Execute(cycle);
      for (int r = 0; r < regions; ++r)
        while (totals.Check(static_cast<std::uint64_t>(r)) != tributary::TaskStatus::complete) {
        }
      for (int r = 0; r < regions; ++r) {
        if (r % p != me) continue;
        std::int64_t want = 0;
        for (int i = 0; i < n; ++i)
          if (particles[static_cast<std::size_t>(i)].region == r) want += Quantity(i, step);
        wrong += totals.Result(static_cast<std::uint64_t>(r)) != want;
        ++checked;
      }
    }
    long long sums[2] = {wrong, checked};
#if TRIBUTARY_HAVE_MPI
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
#endif
    if (me == 0) {
      std::printf("%d particles in %d regions, %d blocks on %d ranks, %d steps\n", n, regions,
                  kBlocks, p, steps);
      if (sums[0] == 0 && sums[1] == static_cast<long long>(regions) * steps) {
        std::printf("OK: %lld region totals reduced by count alone, all correct\n", sums[1]);
      } else {
        std::printf("FAILED: %lld of %lld region totals wrong\n", sums[0], sums[1]);
        status = 1;
      }
    }
  }
#if TRIBUTARY_HAVE_MPI
  MPI_Finalize();
#endif
  return status;
}
