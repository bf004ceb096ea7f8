// tributary-tune: measures every schedule of every collective on this machine and
// communicator, and writes a selection tree that picks the fastest at each message size.
//
//   mpiexec -n 8 tributary-tune --output tuned.json [--max-bytes 4194304] [--quick]
//   then: TRIBUTARY_SELECTION=tuned.json  (or ContextOptions::selection_file)
//
// The written tree holds the measured choices under "comm_size" for this communicator's
// size and the built-in tree for every other size. Per collective and message size the
// candidates run interleaved through the benchmark harness (median of repetitions, every
// result checked); a non-commutative operator gets the fastest order-keeping schedule.
// Message sizes between two measured ones switch at their geometric mean. Before it exits
// the tuner loads the written file into a Context and checks that it selects the measured
// winners.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_harness.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::Collective;
using tributary::ScheduleKind;
using tributary::TaskStatus;
using Json = nlohmann::ordered_json;
namespace tb = tributary::bench;

/// A schedule measured; Rabenseifner at radix 2 (the single-machine tree's), named without it.
struct Candidate {
  ScheduleKind kind;
  int radix = 4;
  std::string Name() const {
    return kind == ScheduleKind::knomial ? "knomial" + std::to_string(radix)
                                         : tributary::ToString(kind);
  }
  Json Leaf() const {
    Json leaf;
    leaf["schedule"] = tributary::ToString(kind);
    if (tributary::TakesRadix(kind)) leaf["radix"] = radix;
    return leaf;
  }
};

const std::string kTreeVariant = "tree in use";

constexpr struct {
  const char* name;
  Collective collective;
} kCollectives[] = {{"allreduce", Collective::allreduce},
                    {"reduce", Collective::reduce},
                    {"allgather", Collective::allgather}};

std::vector<Candidate> CandidatesFor(Collective c) {
  std::vector<Candidate> out;
  for (auto kind : {ScheduleKind::mpi_library, ScheduleKind::binomial, ScheduleKind::knomial,
                    ScheduleKind::pipelined_tree, ScheduleKind::recursive_doubling,
                    ScheduleKind::rabenseifner, ScheduleKind::ring, ScheduleKind::reduce_bcast}) {
    if (!tributary::Supports(kind, c)) continue;
    if (kind == ScheduleKind::knomial) {
      out.push_back({kind, 4});
      out.push_back({kind, 8});
    } else {
      out.push_back({kind, kind == ScheduleKind::rabenseifner ? 2 : 4});
    }
  }
  return out;
}

tributary::ContextOptions OptionsFor(const Candidate& s, Collective c) {
  tributary::ContextOptions o;
  o.debug = tributary::DebugLevel::none;
  (c == Collective::reduce      ? o.reduce_schedule
   : c == Collective::allgather ? o.allgather_schedule
                                : o.allreduce_schedule) = s.kind;
  o.schedule_params.radix = s.radix;
  return o;
}

template <class R>
void Wait(R& r) {
  while (r.CheckReduce() != TaskStatus::complete) {
  }
}

// One variant per candidate, and one for the tree in use (`contexts.back()`, choosing per
// start): a reduction of `n` doubles per rank, checked after each repetition. Returns the
// median time per candidate, then the tree's.
std::vector<double> Measure(Collective c, const std::vector<Candidate>& candidates,
                            const std::vector<std::unique_ptr<tributary::Context>>& contexts,
                            std::size_t bytes, const tb::Options& o) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::size_t n = bytes / sizeof(double);
  std::vector<double> input(n);
  for (std::size_t i = 0; i < n; ++i)
    input[i] = static_cast<double>(i % 5 + static_cast<std::size_t>(rank));
  const auto sum_at = [&](std::size_t i) {
    return static_cast<double>(size) * static_cast<double>(i % 5) + size * (size - 1) / 2.0;
  };
  tb::Runner run(MPI_COMM_WORLD,
                 "tune: " + std::string(kCollectives[static_cast<int>(c)].name) + " of " +
                     tb::FormatBytes(bytes),
                 candidates.front().Name(), o);
  std::vector<std::unique_ptr<tributary::AllReduce<std::vector<double>>>> ar;
  std::vector<std::unique_ptr<tributary::Reduce<std::vector<double>>>> rd;
  std::vector<std::unique_ptr<tributary::AllGather<std::vector<double>>>> ag;
  for (std::size_t k = 0; k < contexts.size(); ++k) {
    auto& ctx = *contexts[k];
    const std::string name = k < candidates.size() ? candidates[k].Name() : kTreeVariant;
    if (c == Collective::allreduce) {
      auto* r =
          ar.emplace_back(std::make_unique<tributary::AllReduce<std::vector<double>>>(ctx, name))
              .get();
      r->val.resize(n);
      run.Add(
          name,
          [r, &input] {
            std::copy(input.begin(), input.end(), r->val.begin());
            r->StartReduce(tributary::Sum{});
            Wait(*r);
          },
          [r, n, &sum_at] {
            for (std::size_t i = 0; i < n; ++i)
              if (r->val[i] != sum_at(i)) return false;
            return true;
          });
    } else if (c == Collective::reduce) {
      auto* r = rd.emplace_back(std::make_unique<tributary::Reduce<std::vector<double>>>(ctx, name))
                    .get();
      r->val.resize(n);
      run.Add(
          name,
          [r, &input] {
            std::copy(input.begin(), input.end(), r->val.begin());
            r->StartReduce(0, tributary::Sum{});
            Wait(*r);
          },
          [r, n, rank, &sum_at] {
            for (std::size_t i = 0; rank == 0 && i < n; ++i)
              if (r->val[i] != sum_at(i)) return false;
            return true;
          });
    } else {
      auto* r =
          ag.emplace_back(std::make_unique<tributary::AllGather<std::vector<double>>>(ctx, name))
              .get();
      r->local = input;
      run.Add(
          name,
          [r] {
            r->StartReduce();
            Wait(*r);
          },
          [r, n, size] {
            if (static_cast<int>(r->val.size()) != size) return false;
            for (int q = 0; q < size; ++q)
              for (std::size_t i = 0; i < n; ++i)
                if (r->val[static_cast<std::size_t>(q)][i] !=
                    static_cast<double>(i % 5 + static_cast<std::size_t>(q)))
                  return false;
            return true;
          });
    }
  }
  run.Run(tb::FormatBytes(bytes));
  run.Report();
  std::vector<double> t;
  for (const auto& c2 : candidates) t.push_back(tb::MedianOf(run.Results(), c2.Name()));
  t.push_back(tb::MedianOf(run.Results(), kTreeVariant));
  return t;
}

// The fastest candidate per size among those `allowed`.
std::vector<std::size_t> Winners(const std::vector<std::vector<double>>& t,
                                 const std::vector<Candidate>& cands, bool order_keeping_only) {
  std::vector<std::size_t> w;
  for (const auto& row : t) {
    std::size_t best = cands.size();
    for (std::size_t k = 0; k < cands.size(); ++k) {
      if (order_keeping_only && !tributary::IsOrderKeeping(cands[k].kind)) continue;
      if (best == cands.size() || row[k] < row[best]) best = k;
    }
    w.push_back(best);
  }
  return w;
}

// A msg_size level (or a single leaf): the winner at sizes[i] covers sizes up to the
// geometric mean of sizes[i] and sizes[i+1]; equal neighbours merge.
Json SizeLevel(const std::vector<std::size_t>& sizes, const std::vector<std::size_t>& winners,
               const std::vector<Candidate>& cands) {
  Json level = Json::array();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const bool last = i + 1 == sizes.size();
    if (!last && winners[i] == winners[i + 1]) continue;
    Json node;
    node["msg_size"] =
        last ? std::string("any")
             : "<= " + std::to_string(static_cast<std::size_t>(std::sqrt(
                           static_cast<double>(sizes[i]) * static_cast<double>(sizes[i + 1]))));
    node["then"] = cands[winners[i]].Leaf();
    level.push_back(node);
  }
  if (level.size() == 1) return level[0]["then"];
  return level;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string output = "tributary-selection.json";
  std::size_t max_bytes = 4u << 20;
  tb::Options defaults;
  defaults.repetitions = 5;
  tb::CommandLine cl(
      "Measures every schedule of every collective on this machine and communicator, and "
      "writes a selection tree that picks the fastest at each message size.\n"
      "Run as: mpiexec -n P tributary-tune [options]",
      defaults);
  cl.app.add_option("--output", output, "Selection tree to write")->capture_default_str();
  cl.app.add_option("--max-bytes", max_bytes, "Largest message in bytes (--quick: 64 KiB)")
      ->capture_default_str();
  if (const int code = cl.Parse(argc, argv); code >= 0) {
    MPI_Finalize();
    return code;
  }
  const bool quick = cl.quick;
  const tb::Options base = cl.options;
  if (quick) max_bytes = std::min<std::size_t>(max_bytes, 64u << 10);

  std::vector<std::size_t> sizes;
  for (std::size_t b = 8; b <= max_bytes; b *= 8) sizes.push_back(b);
  int status = 0;
  {
    Json tuned = Json::array();
    // What the file must select, checked after loading it: (collective, bytes, commutative, kind,
    // radix).
    struct Expect {
      Collective c;
      std::size_t bytes;
      bool commutative;
      Candidate choice;
    };
    std::vector<Expect> expects;
    struct TreeRow {
      Collective c;
      std::size_t bytes;
      double over_best;
      tributary::SelectionChoice choice;
    };
    std::vector<TreeRow> tree_rows;
    for (const auto& col : kCollectives) {
      const auto cands = CandidatesFor(col.collective);
      std::vector<std::unique_ptr<tributary::Context>> contexts;
      for (const auto& s : cands)
        contexts.push_back(std::make_unique<tributary::Context>(OptionsFor(s, col.collective)));
      tributary::ContextOptions tree_options;  // the tree in use: built-in or TRIBUTARY_SELECTION
      tree_options.debug = tributary::DebugLevel::none;
      contexts.push_back(std::make_unique<tributary::Context>(tree_options));
      std::vector<std::vector<double>> t;
      for (std::size_t b : sizes)
        t.push_back(Measure(col.collective, cands, contexts, b, tb::ForMessage(base, b, quick)));
      const auto any = Winners(t, cands, false), ordered = Winners(t, cands, true);
      Json then;
      if (any == ordered) {
        then = SizeLevel(sizes, any, cands);
      } else {
        then =
            Json::array({Json{{"commutative", true}, {"then", SizeLevel(sizes, any, cands)}},
                         Json{{"commutative", "any"}, {"then", SizeLevel(sizes, ordered, cands)}}});
      }
      const bool last = col.collective == Collective::allgather;
      tuned.push_back(Json{{"collective", last ? "any" : col.name}, {"then", then}});
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        expects.push_back({col.collective, sizes[i], true, cands[any[i]]});
        expects.push_back({col.collective, sizes[i], false, cands[ordered[i]]});
        const auto choice =
            contexts.back()->Selection(col.collective).Select(tributary::SelectionInput{sizes[i]});
        tree_rows.push_back({col.collective, sizes[i], t[i].back() / t[i][any[i]], choice});
      }
    }
    if (rank == 0) {
      const Json builtin = Json::parse(tributary::SelectionTree::DefaultJson())["tree"];
      Json tree = Json::array();
      if (size > 1)
        tree.push_back(Json{{"comm_size", "<= " + std::to_string(size - 1)}, {"then", builtin}});
      tree.push_back(Json{{"comm_size", "<= " + std::to_string(size)}, {"then", tuned}});
      tree.push_back(Json{{"comm_size", "any"}, {"then", builtin}});
      Json file;
      file["tributary_selection"] = 1;
      file["comment"] = "written by tributary-tune for " + std::to_string(size) +
                        " ranks; other sizes use the built-in tree";
      file["tree"] = tree;
      std::ofstream out(output);
      out << file.dump(2) << "\n";
      if (!out) {
        std::fprintf(stderr, "tributary-tune: cannot write '%s'\n", output.c_str());
        status = 1;
      }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status == 0) {
      // The written file loads (the Context validates it) and selects what was measured.
      tributary::ContextOptions o;
      o.selection_file = output;
      tributary::Context ctx(o);
      int wrong = 0;
      for (const auto& e : expects) {
        tributary::SelectionInput in;
        in.bytes = e.bytes;
        in.commutative = e.commutative;
        const auto got = ctx.Selection(e.c).Select(in);
        if (got.kind != e.choice.kind ||
            (tributary::TakesRadix(got.kind) && got.params.radix != e.choice.radix)) {
          ++wrong;
          if (rank == 0)
            std::fprintf(stderr, "tributary-tune: %s of %zu B selects %s, measured best %s\n",
                         kCollectives[static_cast<int>(e.c)].name, e.bytes,
                         tributary::ToString(got.kind), e.choice.Name().c_str());
        }
      }
      if (rank == 0) {
        std::printf(
            "\n### Measured winners at %d ranks\n\n| collective | size | fastest | fastest "
            "order-keeping |\n|---|---|---|---|\n",
            size);
        for (std::size_t i = 0; i < expects.size(); i += 2)
          std::printf("| %s | %s | %s | %s |\n", kCollectives[static_cast<int>(expects[i].c)].name,
                      tb::FormatBytes(expects[i].bytes).c_str(), expects[i].choice.Name().c_str(),
                      expects[i + 1].choice.Name().c_str());
        std::printf(
            "\n### The tree in use against the fastest schedule at %d ranks (median time ratio)\n\n"
            "| collective | size | tree's choice | time / fastest |\n|---|---|---|---|\n",
            size);
        double worst = 0;
        for (const auto& r : tree_rows) {
          std::printf("| %s | %s | %s | %.2f |\n", kCollectives[static_cast<int>(r.c)].name,
                      tb::FormatBytes(r.bytes).c_str(), tributary::ToString(r.choice.kind),
                      r.over_best);
          worst = std::max(worst, r.over_best);
        }
        std::printf("\nWorst: %.2f\n", worst);
        if (wrong == 0)
          std::printf(
              "\ntributary-tune: wrote %s; it loads and selects the measured winners at %d ranks\n",
              output.c_str(), size);
      }
      status = wrong == 0 ? 0 : 1;
    }
  }
  MPI_Finalize();
  return status;
}
