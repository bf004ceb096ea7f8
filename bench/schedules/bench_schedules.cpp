// The network schedules against the MPI library, each a ratio measured side by side in one
// run through the shared harness:
//   latency   allreduce latency vs message size for every schedule, MPI_Allreduce and
//             MPI_Iallreduce+MPI_Test; at 2 ranks also the α-β-γ lower bound measured at
//             each size (one-way ping-pong time + local reduction of half the message)
//   overlap   a fixed computation cut into 16 chunks with a poll after each, beside the
//             reduction: OSU, IMB and "hidden" figures
//   selection the cost of evaluating the pruned built-in tree per start (the latency
//             section also runs the built-in tree beside every schedule)
//   determinism  the same allreduce in fast, run_to_run and rank_count_independent mode
//   reduce004 reference 004's table: Reduce<std::vector<int>> (binomial and the other
//             reduce schedules) vs MPI_Reduce for 64Ki, 1Mi, 16Mi and 256Mi ints
// Usage: bench_schedules [--section latency|overlap|reduce004|selection|determinism]
//                        [--max-bytes N]
//                        [--quick] [--csv FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_harness.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::Collective;
using tributary::ScheduleKind;
using tributary::TaskStatus;
namespace tb = tributary::bench;

template <class R>
void Wait(R& r) {
  while (r.CheckReduce() != TaskStatus::complete) {
  }
}

struct Scheduled {
  std::string name;
  ScheduleKind kind;
  int radix = 4;
  bool node_aware = false;
};

// The allreduce schedules compared; the node-aware form (virtual nodes of 2) from 4 ranks.
std::vector<Scheduled> AllreduceSchedules(int size) {
  std::vector<Scheduled> s = {{"mpi_library", ScheduleKind::mpi_library},
                              {"binomial", ScheduleKind::binomial},
                              {"knomial4", ScheduleKind::knomial, 4},
                              {"recursive_doubling", ScheduleKind::recursive_doubling},
                              {"rabenseifner", ScheduleKind::rabenseifner, 2},
                              {"ring", ScheduleKind::ring}};
  if (size >= 4) {
    s.push_back(
        {"node_aware(2/node)+recursive_doubling", ScheduleKind::recursive_doubling, 4, true});
    s.push_back({"node_aware(2/node)+ring", ScheduleKind::ring, 4, true});
  }
  return s;
}

tributary::ContextOptions OptionsFor(const Scheduled& s, Collective c = Collective::allreduce) {
  tributary::ContextOptions o;
  // The schedules themselves: without the per-generation cross-rank length check of
  // variable-size values (DebugLevel::basic adds one small MPI_Iallreduce before each).
  o.debug = tributary::DebugLevel::none;
  (c == Collective::reduce ? o.reduce_schedule : o.allreduce_schedule) = s.kind;
  o.schedule_params.radix = s.radix;
  o.schedule_params.node_aware = s.node_aware;
  if (s.node_aware) o.ranks_per_node = 2;
  return o;
}

// ---------------------------------------------------------------------------------------
void Latency(const tb::Options& base, bool quick, std::size_t max_bytes) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto schedules = AllreduceSchedules(size);
  std::vector<std::unique_ptr<tributary::Context>> contexts;
  for (const auto& s : schedules)
    contexts.push_back(std::make_unique<tributary::Context>(OptionsFor(s)));
  // The built-in selection tree, choosing per start (as users get it by default).
  tributary::ContextOptions tree_options;
  tree_options.debug = tributary::DebugLevel::none;
  tributary::Context tree_context(tree_options);
  const std::string kTree = "selection (built-in tree)";
  MPI_Comm raw;
  MPI_Comm_dup(MPI_COMM_WORLD, &raw);
  std::vector<std::size_t> sizes = {8, 64, 1024, 16384, 131072, 1u << 20, 4u << 20, 16u << 20};
  struct Row {
    std::size_t bytes;
    std::vector<double> t;  // per variant
    double bound = 0;
    double tree = 0, tree_q1 = 0, tree_q3 = 0;  // the built-in tree's median and quartiles
    std::string tree_choice;
  };
  std::vector<std::string> names = {"MPI_Allreduce", "MPI_Iallreduce+MPI_Test"};
  for (const auto& s : schedules) names.push_back(s.name);
  std::vector<Row> rows;
  for (std::size_t bytes : sizes) {
    if (bytes > max_bytes) break;
    const std::size_t n = bytes / sizeof(double);
    const tb::Options o = tb::ForMessage(base, bytes, quick);
    std::vector<double> input(n), buf(n);
    for (std::size_t i = 0; i < n; ++i)
      input[i] = static_cast<double>((i % 7) + static_cast<std::size_t>(rank));
    const auto right = [&](const std::vector<double>& v) {
      for (std::size_t i = 0; i < n; ++i)
        if (v[i] !=
            static_cast<double>(size) * static_cast<double>(i % 7) + size * (size - 1) / 2.0)
          return false;
      return true;
    };
    tb::Runner run(MPI_COMM_WORLD, "allreduce of " + tb::FormatBytes(bytes) + " (doubles, sum)",
                   "MPI_Allreduce", o);
    // Every variant refills its buffer from the input first (the reduction is in place).
    run.Add(
        "MPI_Allreduce",
        [&] {
          std::copy(input.begin(), input.end(), buf.begin());
          MPI_Allreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, raw);
        },
        [&] { return right(buf); });
    run.Add(
        "MPI_Iallreduce+MPI_Test",
        [&] {
          std::copy(input.begin(), input.end(), buf.begin());
          MPI_Request req;
          MPI_Iallreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, raw,
                         &req);
          int done = 0;
          while (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        },
        [&] { return right(buf); });
    std::vector<std::unique_ptr<tributary::AllReduce<std::vector<double>>>> objects;
    for (std::size_t k = 0; k < schedules.size(); ++k) {
      objects.push_back(std::make_unique<tributary::AllReduce<std::vector<double>>>(
          *contexts[k], schedules[k].name));
      auto* r = objects.back().get();
      r->val.resize(n);
      run.Add(
          schedules[k].name,
          [r, &input] {
            std::copy(input.begin(), input.end(), r->val.begin());
            r->StartReduce(tributary::Sum{});
            Wait(*r);
          },
          [r, &right] { return right(r->val); });
    }
    auto tree = std::make_unique<tributary::AllReduce<std::vector<double>>>(tree_context, kTree);
    tree->val.resize(n);
    run.Add(
        kTree,
        [r = tree.get(), &input] {
          std::copy(input.begin(), input.end(), r->val.begin());
          r->StartReduce(tributary::Sum{});
          Wait(*r);
        },
        [r = tree.get(), &right] { return right(r->val); });
    run.Run(tb::FormatBytes(bytes));
    run.Report();
    Row row{bytes, {}, 0, 0, 0, 0, {}};
    for (const auto& name : names) row.t.push_back(tb::MedianOf(run.Results(), name));
    for (const auto& res : run.Results())
      if (res.variant == kTree && res.parameter == tb::FormatBytes(bytes)) {
        row.tree = res.median_s;
        row.tree_q1 = res.q1_s;
        row.tree_q3 = res.q3_s;
      }
    row.tree_choice = tributary::ToString(tree->ScheduleUsed());
    if (size == 2) {
      // The lower bound at p = 2: α + nβ + (n/2)γ, each term measured at this size: a
      // one-way message of n bytes (half a ping-pong) and one core reducing n/2 bytes.
      tb::Runner parts(MPI_COMM_WORLD, "lower-bound terms at " + tb::FormatBytes(bytes),
                       "ping-pong", o);
      std::vector<double> a(n / 2 + 1, 1.0), b(n / 2 + 1, 2.0);
      parts.Add("ping-pong", [&] {
        if (rank == 0) {
          MPI_Send(buf.data(), static_cast<int>(n), MPI_DOUBLE, 1, 0, raw);
          MPI_Recv(buf.data(), static_cast<int>(n), MPI_DOUBLE, 1, 0, raw, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf.data(), static_cast<int>(n), MPI_DOUBLE, 0, 0, raw, MPI_STATUS_IGNORE);
          MPI_Send(buf.data(), static_cast<int>(n), MPI_DOUBLE, 0, 0, raw);
        }
      });
      parts.Add("reduce n/2 bytes", [&] {
        const std::size_t h = n / 2;
        double* __restrict x = a.data();
        const double* __restrict y = b.data();
        for (std::size_t i = 0; i < h; ++i) x[i] += y[i];
        asm volatile("" : : "r"(x) : "memory");
      });
      parts.Run(tb::FormatBytes(bytes));
      parts.Report();
      row.bound = tb::MedianOf(parts.Results(), "ping-pong") / 2 +
                  tb::MedianOf(parts.Results(), "reduce n/2 bytes");
    }
    rows.push_back(row);
  }
  if (rank == 0) {
    std::printf(
        "\n### Allreduce latency at %d ranks: median time (ratio to MPI_Allreduce)\n\n| size |",
        size);
    for (const auto& name : names) std::printf(" %s |", name.c_str());
    std::printf(" built-in tree: choice, time / best (quartiles) |");
    if (size == 2) std::printf(" lower bound | best own / bound | MPI_Allreduce / bound |");
    std::printf("\n|---|");
    for (std::size_t k = 0; k < names.size() + 1 + (size == 2 ? 3 : 0); ++k) std::printf("---|");
    std::printf("\n");
    for (const auto& row : rows) {
      std::printf("| %s |", tb::FormatBytes(row.bytes).c_str());
      double best = 1e30;
      std::size_t best_k = 0;
      for (std::size_t k = 2; k < row.t.size(); ++k)
        if (schedules[k - 2].kind != ScheduleKind::mpi_library && row.t[k] < best) {
          best = row.t[k];
          best_k = k;
        }
      for (std::size_t k = 0; k < row.t.size(); ++k)
        std::printf(k == best_k ? " **%s (%.2f)** |" : " %s (%.2f) |",
                    tb::FormatSeconds(row.t[k]).c_str(), row.t[k] / row.t[0]);
      // Against the fastest flat variant (own or library): the node-aware variants run on
      // virtual nodes, a layout the tree's communicator (one node) does not have.
      double best_any = 1e30;
      for (std::size_t k = 2; k < row.t.size(); ++k)
        if (!schedules[k - 2].node_aware) best_any = std::min(best_any, row.t[k]);
      std::printf(" %s, %.2f (%.2f-%.2f) |", row.tree_choice.c_str(), row.tree / best_any,
                  row.tree_q1 / best_any, row.tree_q3 / best_any);
      if (size == 2)
        std::printf(" %s | %.2f | %.2f |", tb::FormatSeconds(row.bound).c_str(), best / row.bound,
                    row.t[0] / row.bound);
      std::printf("\n");
    }
    std::printf(
        "\nBold: the fastest of Tributary's own schedules at that size. Built-in tree: the\n"
        "schedule it chose and its time over the fastest flat schedule measured (own or the\n"
        "MPI library through Tributary), median with the quartiles over repetitions.\n");
  }
  MPI_Comm_free(&raw);
}

// ---------------------------------------------------------------------------------------
// A unit of computation that stays in registers: about the same time whatever the rank.
double Work(long units) {
  double x = 1.0;
  for (long u = 0; u < units; ++u)
    for (int i = 0; i < 100; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

void Overlap(const tb::Options& base, bool quick, std::size_t max_bytes) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  constexpr int kChunks = 16;
  const std::vector<Scheduled> schedules = {
      {"mpi_library", ScheduleKind::mpi_library},
      {"recursive_doubling", ScheduleKind::recursive_doubling},
      {"rabenseifner", ScheduleKind::rabenseifner, 2},
      {"ring", ScheduleKind::ring}};
  std::vector<std::unique_ptr<tributary::Context>> contexts;
  for (const auto& s : schedules)
    contexts.push_back(std::make_unique<tributary::Context>(OptionsFor(s)));
  MPI_Comm raw;
  MPI_Comm_dup(MPI_COMM_WORLD, &raw);
  // Units per second, measured on rank 0 and shared, so every rank does the same work.
  double units_per_s = 0;
  {
    const auto t0 = std::chrono::steady_clock::now();
    volatile double sink = Work(20000);
    (void)sink;
    units_per_s =
        20000 / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MPI_Bcast(&units_per_s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }
  struct Row {
    std::size_t bytes;
    std::string variant;
    double pure, cpu, overall;
  };
  std::vector<Row> rows;
  volatile double sink = 0;
  for (std::size_t bytes : {std::size_t(8), std::size_t(512), std::size_t(4096), std::size_t(65536),
                            std::size_t(1) << 20, std::size_t(16) << 20}) {
    if (bytes > max_bytes) break;
    const std::size_t n = bytes / sizeof(double);
    const tb::Options o = tb::ForMessage(base, bytes, quick);
    std::vector<double> input(n, 1.0), buf(n);
    // 1. The pure communication time of each variant.
    tb::Runner pure(MPI_COMM_WORLD, "overlap: reduction alone, " + tb::FormatBytes(bytes),
                    "MPI_Iallreduce+MPI_Test", o);
    const auto mpi_start = [&](MPI_Request* req) {
      std::copy(input.begin(), input.end(), buf.begin());
      MPI_Iallreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, raw, req);
    };
    pure.Add("MPI_Iallreduce+MPI_Test", [&] {
      MPI_Request req;
      mpi_start(&req);
      int done = 0;
      while (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    });
    std::vector<std::unique_ptr<tributary::AllReduce<std::vector<double>>>> objects;
    for (std::size_t k = 0; k < schedules.size(); ++k) {
      objects.push_back(std::make_unique<tributary::AllReduce<std::vector<double>>>(
          *contexts[k], schedules[k].name));
      auto* r = objects.back().get();
      r->val.resize(n);
      pure.Add(schedules[k].name, [r, &input] {
        std::copy(input.begin(), input.end(), r->val.begin());
        r->StartReduce(tributary::Sum{});
        Wait(*r);
      });
    }
    pure.Run(tb::FormatBytes(bytes));
    pure.Report();
    // 2. Computation as long as the MPI library's reduction, alone and beside each variant.
    double t_mpi = tb::MedianOf(pure.Results(), "MPI_Iallreduce+MPI_Test");
    MPI_Bcast(&t_mpi, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    const long chunk = std::max(1L, static_cast<long>(t_mpi * units_per_s / kChunks));
    tb::Runner mixed(MPI_COMM_WORLD, "overlap: with computation, " + tb::FormatBytes(bytes),
                     "computation alone", o);
    mixed.Add("computation alone", [&] {
      for (int c = 0; c < kChunks; ++c) sink = sink + Work(chunk);
    });
    mixed.Add("MPI_Iallreduce+MPI_Test", [&] {
      MPI_Request req;
      mpi_start(&req);
      int done = 0;
      for (int c = 0; c < kChunks; ++c) {
        sink = sink + Work(chunk);
        if (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      }
      while (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    });
    for (std::size_t k = 0; k < schedules.size(); ++k) {
      auto* r = objects[k].get();
      mixed.Add(schedules[k].name, [&, r] {
        std::copy(input.begin(), input.end(), r->val.begin());
        r->StartReduce(tributary::Sum{});
        bool done = false;
        for (int c = 0; c < kChunks; ++c) {
          sink = sink + Work(chunk);
          if (!done) done = r->CheckReduce() == TaskStatus::complete;
        }
        if (!done) Wait(*r);
      });
    }
    mixed.Run(tb::FormatBytes(bytes));
    mixed.Report();
    const double cpu = tb::MedianOf(mixed.Results(), "computation alone");
    rows.push_back({bytes, "MPI_Iallreduce+MPI_Test", t_mpi, cpu,
                    tb::MedianOf(mixed.Results(), "MPI_Iallreduce+MPI_Test")});
    for (const auto& s : schedules)
      rows.push_back({bytes, s.name, tb::MedianOf(pure.Results(), s.name), cpu,
                      tb::MedianOf(mixed.Results(), s.name)});
  }
  if (rank == 0) {
    std::printf("\n### Overlap at %d ranks (computation in %d chunks, a poll after each)\n\n", size,
                kChunks);
    std::printf(
        "| size | variant | t_pure | t_cpu | t_overall | OSU %% | IMB %% | hidden %% |\n"
        "|---|---|---|---|---|---|---|---|\n");
    for (const auto& r : rows) {
      const double osu = std::max(0.0, 100.0 - 100.0 * (r.overall - r.cpu) / r.pure);
      const double imb =
          100.0 *
          std::max(0.0, std::min(1.0, (r.pure + r.cpu - r.overall) / std::min(r.pure, r.cpu)));
      const double hidden = 100.0 * (r.cpu + r.pure - r.overall) / std::min(r.cpu, r.pure);
      std::printf("| %s | %s | %s | %s | %s | %.0f | %.0f | %.0f |\n",
                  tb::FormatBytes(r.bytes).c_str(), r.variant.c_str(),
                  tb::FormatSeconds(r.pure).c_str(), tb::FormatSeconds(r.cpu).c_str(),
                  tb::FormatSeconds(r.overall).c_str(), osu, imb, hidden);
    }
  }
  MPI_Comm_free(&raw);
}

// ---------------------------------------------------------------------------------------
void Reduce004(const tb::Options& base, bool quick, std::size_t max_bytes) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::vector<Scheduled> schedules = {
      {"binomial", ScheduleKind::binomial},
      {"knomial4", ScheduleKind::knomial, 4},
      {"pipelined_tree", ScheduleKind::pipelined_tree},
      {"reduce_scatter_gather", ScheduleKind::reduce_scatter_gather, 2},
      {"mpi_library", ScheduleKind::mpi_library}};
  std::vector<std::unique_ptr<tributary::Context>> contexts;
  for (const auto& s : schedules)
    contexts.push_back(std::make_unique<tributary::Context>(OptionsFor(s, Collective::reduce)));
  // The built-in selection tree, choosing per start (as users get it by default).
  tributary::ContextOptions tree_options;
  tree_options.debug = tributary::DebugLevel::none;
  tributary::Context tree_context(tree_options);
  MPI_Comm raw;
  MPI_Comm_dup(MPI_COMM_WORLD, &raw);
  std::vector<std::string> lines;
  for (std::size_t n :
       {std::size_t(1) << 16, std::size_t(1) << 20, std::size_t(1) << 24, std::size_t(1) << 28}) {
    const std::size_t bytes = n * sizeof(int);
    const std::string label = n == (1u << 16)   ? "64K"
                              : n == (1u << 20) ? "1M"
                              : n == (1u << 24) ? "16M"
                                                : "256M";
    // Per rank: the input, MPI_Reduce's result, a val and a scratch buffer per Reduce
    // object (one per schedule, the tree's and the in-place one): 2 + 2 * 6 buffers, and
    // MPI's own.
    // 256Mi ints were killed for lack of memory here at 2 ranks with fewer buffers, so at
    // most 16 GiB of them.
    if (bytes > max_bytes) {
      lines.push_back("| " + label + " | skipped (--max-bytes) |");
      continue;
    }
    if (static_cast<double>(bytes) * static_cast<double>(2 + 2 * (schedules.size() + 2)) * size >
        16.0 * (1u << 30)) {
      lines.push_back("| " + label + " | does not fit in 24 GiB at " + std::to_string(size) +
                      " ranks |");
      continue;
    }
    tb::Options o = base;
    if (!quick) {
      o.iterations = n <= (1u << 16) ? 200 : n <= (1u << 20) ? 20 : n <= (1u << 24) ? 2 : 1;
      o.warmup = std::min(o.iterations, 5);
      o.repetitions = n <= (1u << 24) ? 7 : 3;
    }
    std::vector<int> input(n), result(rank == 0 ? n : 0);
    for (std::size_t i = 0; i < n; ++i) input[i] = static_cast<int>(i % 1000) + rank;
    const auto right = [&](const std::vector<int>& v) {
      if (rank != 0) return true;
      for (std::size_t i = 0; i < n; ++i)
        if (v[i] != static_cast<int>(i % 1000) * size + size * (size - 1) / 2) return false;
      return true;
    };
    tb::Runner run(MPI_COMM_WORLD, "reduce of " + label + " ints to rank 0", "MPI_Reduce", o);
    run.Add(
        "MPI_Reduce",
        [&] {
          MPI_Reduce(input.data(), result.data(), static_cast<int>(n), MPI_INT, MPI_SUM, 0, raw);
        },
        [&] { return right(result); });
    // Tributary with MPI_Reduce's buffers: StartReduce(root, op, input) leaves the input
    // as it is and the root's val receives the result.
    std::vector<std::unique_ptr<tributary::Reduce<std::vector<int>>>> objects;
    for (std::size_t k = 0; k < schedules.size(); ++k) {
      objects.push_back(
          std::make_unique<tributary::Reduce<std::vector<int>>>(*contexts[k], schedules[k].name));
      auto* r = objects.back().get();
      run.Add(
          "Reduce " + schedules[k].name,
          [r, &input] {
            r->StartReduce(0, tributary::Sum{}, input);
            Wait(*r);
          },
          [r, &right] { return right(r->val); });
    }
    objects.push_back(std::make_unique<tributary::Reduce<std::vector<int>>>(tree_context, "tree"));
    {
      auto* r = objects.back().get();
      run.Add(
          "Reduce built-in tree",
          [r, &input] {
            r->StartReduce(0, tributary::Sum{}, input);
            Wait(*r);
          },
          [r, &right] { return right(r->val); });
    }
    // The in-place start for comparison: the root refills val from the input first (the
    // other ranks' val is unchanged by a Reduce).
    objects.push_back(
        std::make_unique<tributary::Reduce<std::vector<int>>>(*contexts[0], "in place"));
    {
      auto* r = objects.back().get();
      r->val = input;
      run.Add(
          "Reduce binomial in place",
          [r, &input, rank] {
            if (rank == 0) std::copy(input.begin(), input.end(), r->val.begin());
            r->StartReduce(0, tributary::Sum{});
            Wait(*r);
          },
          [r, &right] { return right(r->val); });
    }
    run.Run(label);
    run.Report();
    const double t_mpi = tb::MedianOf(run.Results(), "MPI_Reduce");
    std::string line = "| " + label + " | " + tb::FormatSeconds(t_mpi) + " |";
    for (const auto& s : schedules) {
      const double t = tb::MedianOf(run.Results(), "Reduce " + s.name);
      char cell[64];
      std::snprintf(cell, sizeof cell, " %s (%.2fx) |", tb::FormatSeconds(t).c_str(), t_mpi / t);
      line += cell;
    }
    {
      const double t = tb::MedianOf(run.Results(), "Reduce built-in tree");
      char cell[96];
      std::snprintf(cell, sizeof cell, " %s (%.2fx) | %.2fx |", tb::FormatSeconds(t).c_str(),
                    t_mpi / t, t_mpi / tb::MedianOf(run.Results(), "Reduce binomial in place"));
      line += cell;
    }
    lines.push_back(line);
    objects.clear();
  }
  if (rank == 0) {
    std::printf(
        "\n### Reference 004 at %d ranks: Reduce to rank 0, median time (speedup over "
        "MPI_Reduce)\n\n"
        "| ints | MPI_Reduce |",
        size);
    for (const auto& s : schedules) std::printf(" Reduce %s |", s.name.c_str());
    std::printf(" Reduce, built-in tree | Reduce binomial, in place + refill |\n|---|---|---|---|");
    for (std::size_t k = 0; k < schedules.size(); ++k) std::printf("---|");
    std::printf("\n");
    for (const auto& l : lines) std::printf("%s\n", l.c_str());
  }
  MPI_Comm_free(&raw);
}

// ---------------------------------------------------------------------------------------
// The determinism modes against fast: the same allreduce of doubles (sum) in each mode,
// side by side, at 8 B, 1 KiB, 64 KiB and 1 MiB; each result checked against the exact sum.
void DeterminismCost(const tb::Options& base, bool quick, std::size_t max_bytes) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::pair<const char*, tributary::Determinism> modes[] = {
      {"fast", tributary::Determinism::fast},
      {"run_to_run", tributary::Determinism::run_to_run},
      {"rank_count_independent", tributary::Determinism::rank_count_independent}};
  std::vector<std::unique_ptr<tributary::Context>> contexts;
  for (const auto& m : modes) {
    tributary::ContextOptions o;
    o.debug = tributary::DebugLevel::none;
    o.determinism = m.second;
    contexts.push_back(std::make_unique<tributary::Context>(o));
  }
  std::vector<std::string> lines;
  for (std::size_t bytes :
       {std::size_t(8), std::size_t(1024), std::size_t(65536), std::size_t(1) << 20}) {
    if (bytes > max_bytes) break;
    const std::size_t n = bytes / sizeof(double);
    const tb::Options o = tb::ForMessage(base, bytes, quick);
    std::vector<double> input(n);
    for (std::size_t i = 0; i < n; ++i) input[i] = 0.1 * static_cast<double>(i % 17) + 1e-3 * rank;
    tb::Runner run(MPI_COMM_WORLD,
                   "determinism: allreduce of " + tb::FormatBytes(bytes) + " (doubles, sum)",
                   "fast", o);
    std::vector<std::unique_ptr<tributary::AllReduce<std::vector<double>>>> objects;
    for (std::size_t k = 0; k < contexts.size(); ++k) {
      objects.push_back(std::make_unique<tributary::AllReduce<std::vector<double>>>(
          *contexts[k], modes[k].first));
      auto* r = objects.back().get();
      r->val.resize(n);
      run.Add(
          modes[k].first,
          [r, &input] {
            std::copy(input.begin(), input.end(), r->val.begin());
            r->StartReduce(tributary::Sum{});
            Wait(*r);
          },
          [r, n, size] {  // within rounding of the exact sum
            for (std::size_t i = 0; i < n; ++i) {
              const double exact =
                  size * 0.1 * static_cast<double>(i % 17) + 1e-3 * size * (size - 1) / 2.0;
              if (std::abs(r->val[i] - exact) > 1e-12 * (1 + std::abs(exact))) return false;
            }
            return true;
          });
    }
    run.Run(tb::FormatBytes(bytes));
    run.Report();
    const double t_fast = tb::MedianOf(run.Results(), "fast");
    const double ordered = tb::MedianOf(run.Results(), "run_to_run") / t_fast,
                 exact = tb::MedianOf(run.Results(), "rank_count_independent") / t_fast;
    // Goals: run_to_run within 1.1x of fast; rank_count_independent within 2x from 1 KiB.
    std::string verdict = ordered <= 1.1 ? "met" : "`run_to_run` **not met**";
    if (bytes >= 1024 && exact > 2.0)
      verdict = verdict == "met" ? "`rank_count_independent` **not met**" : "**not met**";
    char line[256];
    std::snprintf(line, sizeof line, "| %s | %s | %.2f | %.2f | %s |",
                  tb::FormatBytes(bytes).c_str(), tb::FormatSeconds(t_fast).c_str(), ordered, exact,
                  verdict.c_str());
    lines.push_back(line);
  }
  if (rank == 0) {
    std::printf(
        "\n### Determinism modes at %d ranks: time relative to fast (median)\n\n"
        "| size | `fast` | `run_to_run` | `rank_count_independent` | goals (`run_to_run` ≤ 1.1; "
        "`rank_count_independent` ≤ 2 from 1 KiB) |\n|---|---|---|---|---|\n",
        size);
    for (const auto& l : lines) std::printf("%s\n", l.c_str());
  }
}

// ---------------------------------------------------------------------------------------
// The cost of choosing: evaluating the pruned built-in tree once per start, on rank 0,
// cycling through message sizes and operator properties so no branch is always taken.
void SelectionCost() {
  tributary::Context ctx;
  if (ctx.Rank() != 0) return;
  std::vector<tributary::SelectionInput> inputs;
  for (std::size_t b = 8; b <= (std::size_t(64) << 20); b *= 4)
    for (bool commutative : {true, false}) {
      tributary::SelectionInput in;
      in.bytes = b;
      in.commutative = commutative;
      in.builtin_op = commutative;
      inputs.push_back(in);
    }
  std::printf(
      "\n### Selection cost at %d ranks (pruned built-in tree, %zu inputs cycled)\n\n"
      "| collective | operators left | ns per Select (median of 7) |\n|---|---|---|\n",
      ctx.Size(), inputs.size());
  for (auto c : {Collective::allreduce, Collective::reduce, Collective::allgather}) {
    const auto& tree = ctx.Selection(c);
    constexpr std::size_t kEvaluations = 2000000;
    std::vector<double> ns;
    volatile unsigned sink = 0;
    for (int rep = 0; rep < 7; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < kEvaluations; ++i) {
        const auto choice = tree.Select(inputs[i % inputs.size()]);
        sink = sink + static_cast<unsigned>(choice.kind);
      }
      ns.push_back(
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
          kEvaluations);
    }
    std::sort(ns.begin(), ns.end());
    static const char* const names[] = {"allreduce", "reduce", "allgather"};
    std::printf("| %s | %zu | %.1f |\n", names[static_cast<int>(c)], tree.OperatorCount(), ns[3]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int code = 0;
  {
    tb::CommandLine cl(
        "Tributary's schedules against the MPI library: latency, overlap, reference 004's "
        "reduce, selection cost and determinism cost.",
        tb::Options{20, 200, 7, "", true});
    std::string section;
    std::size_t max_bytes = std::size_t(1) << 40;
    cl.app.add_option("--section", section, "Run one section only")
        ->check(CLI::IsMember({"latency", "overlap", "reduce004", "selection", "determinism"}));
    cl.app.add_option("--max-bytes", max_bytes, "Largest message in bytes (--quick: 1 MiB)");
    code = cl.Parse(argc, argv);
    if (code < 0) {
      code = 0;
      tb::Options o = cl.options;
      o.repetitions = std::max(o.repetitions, 1);
      const bool quick = cl.quick;
      if (quick) max_bytes = std::min<std::size_t>(max_bytes, 1u << 20);
      if (section.empty() || section == "latency") Latency(o, quick, max_bytes);
      if (section.empty() || section == "overlap") Overlap(o, quick, max_bytes);
      if (section.empty() || section == "reduce004") Reduce004(o, quick, max_bytes);
      if (section.empty() || section == "selection") SelectionCost();
      if (section.empty() || section == "determinism") DeterminismCost(o, quick, max_bytes);
    }
  }
  MPI_Finalize();
  return code;
}
