// Block reduction patterns against the MPI library, each a ratio measured side by side in
// one run (4 blocks per rank by default, one task list per block):
//  1. merge-reduce and all-reduce of a vector per block, by radix, against a local combine
//     of the rank's blocks followed by one MPI_Allreduce;
//  2. swap-reduce of a vector per block (each block ends with its slice of the sum), by
//     radix, against a local combine followed by one MPI_Reduce_scatter_block;
//  3. an all-to-all among the blocks (every block sends m doubles to every block), by radix
//     and sent directly (a radix of every block), against one MPI_Alltoall of the same bytes.
// --blocks-per-rank sets the blocks per rank (4 by default); --only runs some of the three
// (reductions, swap, all-to-all).
// It ends with one table of the medians by radix (docs/performance.md takes it as it is).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_harness.hpp"
#include "tributary/tributary.hpp"

namespace {

namespace tb = tributary::bench;

struct Block {
  int gid = 0;
  std::vector<double> data;
  std::vector<double> acc, in;  // scratch of the callback, reused from call to call
  std::size_t lo = 0, hi = 0;   // swap: the slice this block holds
};

int kBlocksPerRank = 4;

// One closing-table row: every variant whose name begins with `prefix` (radix 2, 4, 8 in
// order) against the baseline, "a / b / c µs vs d µs" and their ratios "x / y / z".
void AddByRadix(tb::GoalTable& table, const std::string& comparison,
                const std::vector<tb::Result>& results, const std::string& prefix) {
  std::string times, ratios;
  for (const tb::Result& r : results) {
    if (r.variant.compare(0, prefix.size(), prefix) != 0) continue;
    times += (times.empty() ? "" : " / ") + tb::FormatSeconds(r.median_s);
    ratios += (ratios.empty() ? "" : " / ") + tb::FormatRatio(r.ratio);
  }
  table.Add(comparison, times + " vs " + tb::FormatSeconds(results.front().median_s), ratios);
}

void Reductions(const tb::Options& base, tributary::Context& ctx, bool quick,
                tb::GoalTable& table) {
  const int p = ctx.Size(), blocks = kBlocksPerRank * p;
  const tributary::BlockGrid grid = tributary::BlockGrid::Regular(blocks, 1, p);
  std::vector<std::size_t> sizes = {1, 1024, 65536};
  if (quick) sizes = {1, 1024};
  for (std::size_t n : sizes) {
    tb::Runner run(MPI_COMM_WORLD, "block reductions, " + std::to_string(blocks) + " blocks",
                   "local combine + MPI_Allreduce",
                   tb::ForMessage(base, n * sizeof(double), quick));
    std::vector<Block> mine;
    for (int g : grid.LocalBlocks(ctx.Rank()))
      mine.push_back(Block{g, std::vector<double>(n, 1.0), {}, {}, 0, n});
    std::vector<std::pair<int, Block*>> ptrs;
    for (Block& b : mine) ptrs.push_back({b.gid, &b});
    const auto reset = [&] {
      for (Block& b : mine) std::fill(b.data.begin(), b.data.end(), 1.0);
    };
    std::vector<double> local(n);
    run.Add(
        "local combine + MPI_Allreduce",
        [&] {
          reset();
          std::fill(local.begin(), local.end(), 0.0);
          for (const Block& b : mine)
            for (std::size_t i = 0; i < n; ++i) local[i] += b.data[i];
          MPI_Allreduce(MPI_IN_PLACE, local.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM,
                        MPI_COMM_WORLD);
        },
        [&] { return local[0] == blocks; });
    // Each pattern and radix: its own object and task collection, reused every iteration.
    struct Variant {
      std::unique_ptr<tributary::BlockReduction<Block>> pattern;
      tributary::TaskCollection tc;
    };
    std::vector<std::unique_ptr<Variant>> variants;
    const auto sum_in = [](Block& b, tributary::BlockProxy& rp) {
      if (rp.InLink().empty()) return;
      b.acc.assign(b.data.size(), 0.0);
      for (int from : rp.InLink()) {
        rp.Dequeue(from, b.in);
        for (std::size_t i = 0; i < b.acc.size(); ++i) b.acc[i] += b.in[i];
      }
      b.data.swap(b.acc);
    };
    for (bool all : {false, true})
      for (int k : {2, 4, 8}) {
        auto v = std::make_unique<Variant>();
        std::shared_ptr<const tributary::BlockPartners> steps;
        if (all)
          steps = std::make_shared<tributary::AllReducePartners>(grid, std::vector<int>{k});
        else
          steps = std::make_shared<tributary::MergePartners>(grid, std::vector<int>{k});
        v->pattern = std::make_unique<tributary::BlockReduction<Block>>(
            ctx, steps,
            [sum_in](Block& b, tributary::BlockProxy& rp,
                     const tributary::BlockPartners& partners) {
              if (partners.InMerge(rp.Round()))
                sum_in(b, rp);
              else
                rp.Dequeue(rp.InLink()[0], b.data);
              for (int to : rp.OutLink()) rp.Enqueue(to, b.data);
            });
        v->pattern->AddTasks(v->tc.AddRegion(static_cast<int>(mine.size())));
        Variant* raw = v.get();
        run.Add(
            std::string(all ? "all-reduce" : "merge") + ", radix " + std::to_string(k),
            [&, raw] {
              reset();
              raw->pattern->Start(ptrs);
              ctx.Execute(raw->tc);
            },
            [&, all] {
              bool ok = true;
              for (const Block& b : mine)
                if (all || b.gid == 0) ok = ok && b.data[0] == blocks;
              return ok;
            });
        variants.push_back(std::move(v));
      }
    run.Run(tb::FormatBytes(n * sizeof(double)));
    run.Report();
    if (ctx.Rank() == 0)
      for (const char* pattern : {"merge", "all-reduce"})
        AddByRadix(table,
                   tb::FormatBytes(n * sizeof(double)) + " per block: " + pattern +
                       ", radix 2 / 4 / 8, vs a local combine + `MPI_Allreduce`",
                   run.Results(), std::string(pattern) + ", radix");
  }
}

// Swap-reduce: every block holds n doubles of 1.0; each call adds what the rest of its group
// sent, read where it arrived, into the block's slice, which stays where it is (nothing
// goes to the block itself), and sends the other parts of the slice on (pointer + count);
// at the end each block holds its slice of the sum (= blocks).
void Swaps(const tb::Options& base, tributary::Context& ctx, bool quick, tb::GoalTable& table) {
  const int p = ctx.Size(), blocks = kBlocksPerRank * p;
  const tributary::BlockGrid grid = tributary::BlockGrid::Regular(blocks, 1, p);
  std::vector<std::size_t> sizes = {1024, 65536};
  if (quick) sizes = {1024};
  for (std::size_t n : sizes) {
    tb::Runner run(MPI_COMM_WORLD, "block swap-reduce, " + std::to_string(blocks) + " blocks",
                   "local combine + MPI_Reduce_scatter_block",
                   tb::ForMessage(base, n * sizeof(double), quick));
    std::vector<Block> mine;
    for (int g : grid.LocalBlocks(ctx.Rank()))
      mine.push_back(Block{g, std::vector<double>(n, 1.0), {}, {}, 0, n});
    std::vector<std::pair<int, Block*>> ptrs;
    for (Block& b : mine) ptrs.push_back({b.gid, &b});
    const auto reset = [&] {
      for (Block& b : mine) {
        std::fill(b.data.begin(), b.data.end(), 1.0);
        b.lo = 0;
        b.hi = n;
      }
    };
    const std::size_t share = n / static_cast<std::size_t>(p);
    std::vector<double> local(n), part(share);
    run.Add(
        "local combine + MPI_Reduce_scatter_block",
        [&] {
          reset();
          std::fill(local.begin(), local.end(), 0.0);
          for (const Block& b : mine)
            for (std::size_t i = 0; i < n; ++i) local[i] += b.data[i];
          MPI_Reduce_scatter_block(local.data(), part.data(), static_cast<int>(share), MPI_DOUBLE,
                                   MPI_SUM, MPI_COMM_WORLD);
        },
        [&] { return part[0] == blocks; });
    struct Variant {
      std::unique_ptr<tributary::BlockReduction<Block>> pattern;
      tributary::TaskCollection tc;
    };
    std::vector<std::unique_ptr<Variant>> variants;
    for (int k : {2, 4, 8}) {
      auto v = std::make_unique<Variant>();
      v->pattern = std::make_unique<tributary::BlockReduction<Block>>(
          ctx, tributary::SwapPartners(grid, {k}),
          [](Block& b, tributary::BlockProxy& rp, const tributary::BlockPartners&) {
            const std::size_t len = b.hi - b.lo;
            double* slice = b.data.data() + b.lo;
            for (int from : rp.InLink()) {
              if (from == b.gid) continue;  // its own part never left the block
              const double* in = rp.DequeueInPlace<double>(from, len);
              for (std::size_t i = 0; i < len; ++i) slice[i] += in[i];
            }
            const auto& out = rp.OutLink();
            const std::size_t parts = out.size(), lo = b.lo;
            for (std::size_t j = 0; j < parts; ++j) {
              const std::size_t a = lo + len * j / parts, z = lo + len * (j + 1) / parts;
              if (out[j] == b.gid) {
                b.lo = a;
                b.hi = z;
              } else {
                rp.Enqueue(out[j], b.data.data() + a, z - a);
              }
            }
          });
      v->pattern->AddTasks(v->tc.AddRegion(static_cast<int>(mine.size())));
      Variant* raw = v.get();
      run.Add(
          "swap, radix " + std::to_string(k),
          [&, raw] {
            reset();
            raw->pattern->Start(ptrs);
            ctx.Execute(raw->tc);
          },
          [&] {
            bool ok = true;
            for (const Block& b : mine)
              for (std::size_t i = b.lo; i < b.hi; ++i) ok = ok && b.data[i] == blocks;
            return ok;
          });
      variants.push_back(std::move(v));
    }
    run.Run(tb::FormatBytes(n * sizeof(double)));
    run.Report();
    if (ctx.Rank() == 0)
      AddByRadix(table,
                 tb::FormatBytes(n * sizeof(double)) +
                     " per block: swap, radix 2 / 4 / 8, vs a local combine + "
                     "`MPI_Reduce_scatter_block`",
                 run.Results(), "swap, radix");
  }
}

void AllToAll(const tb::Options& base, tributary::Context& ctx, bool quick, tb::GoalTable& table) {
  const int p = ctx.Size(), blocks = kBlocksPerRank * p;
  const tributary::BlockGrid grid = tributary::BlockGrid::Regular(blocks, 1, p);
  std::vector<std::size_t> sizes = {1, 256, 4096};
  if (quick) sizes = {1, 256};
  for (std::size_t m : sizes) {
    tb::Runner run(
        MPI_COMM_WORLD, "block all-to-all, " + std::to_string(blocks) + " blocks", "MPI_Alltoall",
        tb::ForMessage(base, m * sizeof(double) * static_cast<std::size_t>(blocks), quick));
    const int per_pair = kBlocksPerRank * kBlocksPerRank * static_cast<int>(m);
    std::vector<double> send(static_cast<std::size_t>(per_pair) * static_cast<std::size_t>(p), 1.0),
        recv(send.size());
    run.Add(
        "MPI_Alltoall",
        [&] {
          MPI_Alltoall(send.data(), per_pair, MPI_DOUBLE, recv.data(), per_pair, MPI_DOUBLE,
                       MPI_COMM_WORLD);
        },
        [&] { return recv[0] == 1.0; });
    std::vector<Block> mine;
    for (int g : grid.LocalBlocks(ctx.Rank())) mine.push_back(Block{g, {}, {}, {}, 0, 0});
    std::vector<std::pair<int, Block*>> ptrs;
    for (Block& b : mine) ptrs.push_back({b.gid, &b});
    std::vector<double> payload(m, 1.0);
    double received = 0;
    struct Variant {
      std::unique_ptr<tributary::BlockAllToAll<Block>> pattern;
      tributary::TaskCollection tc;
    };
    std::vector<std::unique_ptr<Variant>> variants;
    for (int k : {2, 4, 8, 0}) {  // 0: a radix of every block, straight to each block
      const bool direct = k == 0;
      if (direct) k = blocks;
      auto v = std::make_unique<Variant>();
      v->pattern = std::make_unique<tributary::BlockAllToAll<Block>>(
          ctx, grid,
          [&](Block&, tributary::BlockProxy& rp) {
            if (rp.InLink().empty()) {
              for (int to : rp.OutLink()) rp.Enqueue(to, payload);
              return;
            }
            std::vector<double> in;
            for (int from : rp.InLink()) {
              rp.Dequeue(from, in);
              received += in[0];
            }
          },
          std::vector<int>{k});
      v->pattern->AddTasks(v->tc.AddRegion(static_cast<int>(mine.size())));
      Variant* raw = v.get();
      run.Add(
          direct ? std::string("blocks, direct") : "blocks, radix " + std::to_string(k),
          [&, raw] {
            received = 0;
            raw->pattern->Start(ptrs);
            ctx.Execute(raw->tc);
          },
          [&] {
            return received == static_cast<double>(blocks) * static_cast<double>(mine.size());
          });
      variants.push_back(std::move(v));
    }
    run.Run(tb::FormatBytes(m * sizeof(double)) + " per block pair");
    run.Report();
    if (ctx.Rank() == 0)
      AddByRadix(table,
                 tb::FormatBytes(m * sizeof(double)) +
                     " per block pair: all-to-all, radix 2 / 4 / 8 / direct, vs one "
                     "`MPI_Alltoall`",
                 run.Results(), "blocks, ");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    tb::Options defaults;
    defaults.repetitions = 7;
    tb::CommandLine cl(
        "Block reduction patterns (merge-reduce, all-reduce, swap-reduce, "
        "all-to-all) against the MPI library.",
        defaults);
    cl.app.add_option("--blocks-per-rank", kBlocksPerRank, "Blocks on each rank")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    std::vector<std::string> only;
    cl.app.add_option("--only", only, "Run only these: reductions, swap, all-to-all")
        ->check(CLI::IsMember({"reductions", "swap", "all-to-all"}))
        ->delimiter(',');
    if (const int code = cl.Parse(argc, argv); code >= 0) {
      MPI_Finalize();
      return code;
    }
    const bool quick = cl.quick;

    const tb::Options o = cl.options;
    tributary::Context ctx;
    tb::GoalTable table;
    const auto runs = [&](const char* part) {
      return only.empty() || std::find(only.begin(), only.end(), part) != only.end();
    };
    if (runs("reductions")) Reductions(o, ctx, quick, table);
    if (runs("swap")) Swaps(o, ctx, quick, table);
    if (runs("all-to-all")) AllToAll(o, ctx, quick, table);
    if (ctx.Rank() == 0)
      table.Print(
          ("Block patterns at " + std::to_string(ctx.Size()) + " ranks against the MPI library" +
           (kBlocksPerRank == 4 ? std::string()
                                : ", " + std::to_string(kBlocksPerRank) + " blocks per rank"))
              .c_str());
  }
  MPI_Finalize();
  return 0;
}
