// histogram_swap: every block of a 2-D grid of blocks bins its own particles into a global
// histogram; a swap-reduce then leaves each block one slice of the summed histogram (the
// way image compositing splits an image among the blocks), and the slices are checked
// against a histogram computed directly from all particles. Each round is a task of the
// block's list: it returns at once while its messages travel.
//
//   mpiexec -n 4 histogram_swap [blocks] [bins] [radix]     (defaults: 12 blocks, 1000 bins, 2)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../command_line.hpp"
#include "tributary/tributary.hpp"

namespace {

struct Block {
  int gid = 0;
  std::vector<std::int64_t> bins;  // the whole histogram at first, then only [lo, hi)
  std::size_t lo = 0, hi = 0;
};

// The particles of block gid: a deterministic stream, so that any rank can recount them.
std::vector<double> Particles(int gid) {
  std::vector<double> p(static_cast<std::size_t>(5000 + 37 * gid));
  std::uint64_t s = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(gid + 1);
  for (double& x : p) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const double u = static_cast<double>(s >> 11) / 9007199254740992.0;
    x = u * u;  // more particles at low values
  }
  return p;
}

void Bin(const std::vector<double>& particles, std::vector<std::int64_t>& bins) {
  for (double x : particles)
    ++bins[std::min(bins.size() - 1,
                    static_cast<std::size_t>(x * static_cast<double>(bins.size())))];
}

}  // namespace

int main(int argc, char** argv) {
#if TRIBUTARY_HAVE_MPI
  MPI_Init(&argc, &argv);
#endif
  int blocks = 12, nbins = 1000, radix = 2;
  CLI::App app{"A global histogram binned per block, then swap-reduced into one slice per block."};
  app.add_option("blocks", blocks, "Blocks in the 2-D grid")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("bins", nbins, "Histogram bins")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("radix", radix, "Partners per swap round")
      ->check(CLI::Range(2, 1 << 20))
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
    const tributary::BlockGrid grid = tributary::BlockGrid::Regular(blocks, 2, ctx.Size());
    tributary::BlockReduction<Block> swap(
        ctx, tributary::SwapPartners(grid, {radix}),
        [](Block& b, tributary::BlockProxy& rp, const tributary::BlockPartners&) {
          if (!rp.InLink().empty()) {  // every partner sent our slice: add them up
            std::vector<std::int64_t> sum(b.hi - b.lo, 0), part;
            for (int from : rp.InLink()) {
              rp.Dequeue(from, part);
              for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += part[i];
            }
            std::copy(sum.begin(), sum.end(), b.bins.begin() + static_cast<std::ptrdiff_t>(b.lo));
          }
          // Split our slice among this round's group; keep the part whose index is ours.
          const auto& out = rp.OutLink();
          const std::size_t k = out.size(), n = b.hi - b.lo, lo = b.lo;
          for (std::size_t j = 0; j < k; ++j) {
            const std::size_t a = lo + n * j / k, z = lo + n * (j + 1) / k;
            rp.Enqueue(out[j],
                       std::vector<std::int64_t>(b.bins.begin() + static_cast<std::ptrdiff_t>(a),
                                                 b.bins.begin() + static_cast<std::ptrdiff_t>(z)));
            if (out[j] == b.gid) b.lo = a, b.hi = z;
          }
        },
        "histogram");

    std::vector<Block> mine;
    for (int g : grid.LocalBlocks(ctx.Rank())) {
      Block b;
      b.gid = g;
      b.bins.assign(static_cast<std::size_t>(nbins), 0);
      b.hi = b.bins.size();
      Bin(Particles(g), b.bins);
      mine.push_back(std::move(b));
    }
    std::vector<std::pair<int, Block*>> ptrs;
    for (Block& b : mine) ptrs.push_back({b.gid, &b});
    swap.Start(ptrs);
    tributary::TaskCollection tc;
    auto& region = tc.AddRegion(static_cast<int>(mine.size()));
    swap.AddTasks(region);
    ctx.Execute(tc);

    // Check every slice against the histogram of all particles.
    std::vector<std::int64_t> want(static_cast<std::size_t>(nbins), 0);
    for (int g = 0; g < blocks; ++g) Bin(Particles(g), want);
    long long wrong = 0, held = 0;
    for (const Block& b : mine) {
      held += static_cast<long long>(b.hi - b.lo);
      for (std::size_t i = b.lo; i < b.hi; ++i) wrong += b.bins[i] != want[i];
    }
    long long totals[2] = {wrong, held};
#if TRIBUTARY_HAVE_MPI
    MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
#endif
    if (ctx.Rank() == 0) {
      std::printf("%d blocks (%d x %d), %d bins, radix %d, %d rounds on %d ranks\n", blocks,
                  grid.Divisions()[0], grid.Divisions()[1], nbins, radix, swap.Calls() - 1,
                  ctx.Size());
      if (totals[0] == 0 && totals[1] == nbins) {
        std::printf(
            "OK: every bin of the summed histogram held by exactly one block and correct\n");
      } else {
        std::printf("FAILED: %lld wrong bins, %lld bins held of %d\n", totals[0], totals[1], nbins);
        status = 1;
      }
    }
  }
#if TRIBUTARY_HAVE_MPI
  MPI_Finalize();
#endif
  return status;
}
