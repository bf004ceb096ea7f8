// tributary-selection: prints the selection tree pruned for a communicator, per collective.
//
//   mpiexec -n 8 tributary-selection [--file tree.json]        the job's MPI_COMM_WORLD
//   tributary-selection --size 64 --ranks-per-node 16 [...]    a communicator described
//
// With --size the tree is pruned for the facts given, without MPI. Otherwise a Context is
// created over MPI_COMM_WORLD (with --file as its selection file, else
// TRIBUTARY_SELECTION, else the built-in tree) and rank 0 prints what that Context uses.
// The output of one collective is a valid selection file.

// SimGrid SMPI forces a header into every file that defines exit(x) as a macro; it would
// rename CLI11's App::exit. This tool never calls exit() itself.
#ifdef exit
#undef exit
#endif
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "selection/cluster_model.hpp"
#include "tributary/tributary.hpp"

namespace {

struct Named {
  const char* name;
  tributary::Collective collective;
};
constexpr Named kCollectives[] = {{"allreduce", tributary::Collective::allreduce},
                                  {"reduce", tributary::Collective::reduce},
                                  {"allgather", tributary::Collective::allgather}};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw tributary::UsageError("tributary-selection: cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void Print(const tributary::SelectionFacts& f, const std::string& which,
           const std::function<const tributary::SelectionTree&(tributary::Collective)>& tree) {
  std::printf("# communicator: %d rank(s); %d node(s), the largest with %d rank(s)\n", f.comm_size,
              f.node_count, f.ranks_per_node);
  for (const auto& c : kCollectives) {
    if (which != "all" && which != c.name) continue;
    std::printf("# %s\n%s\n", c.name, tree(c.collective).ToJson().c_str());
  }
}

}  // namespace

// Every exception ends here, the option parser's included: a message and exit code 1.
int main(int argc, char** argv) try {
  CLI::App app{"Prints Tributary's selection tree pruned for a communicator, per collective."};
  std::string file, which = "all";
  tributary::SelectionFacts facts;
  int size = 0;
  app.add_option("--file", file, "Selection file (default: TRIBUTARY_SELECTION, else built-in)");
  app.add_option("--collective", which, "allreduce, reduce, allgather or all")
      ->check(CLI::IsMember({"all", "allreduce", "reduce", "allgather"}));
  auto* by_size = app.add_option("--size", size,
                                 "Prune for a communicator of this many ranks "
                                 "instead of the job's (no MPI needed)")
                      ->check(CLI::PositiveNumber);
  auto* rpn = app.add_option("--ranks-per-node", facts.ranks_per_node,
                             "With --size: ranks on the largest node (default: size / nodes)")
                  ->check(CLI::PositiveNumber)
                  ->needs(by_size);
  app.add_option("--nodes", facts.node_count, "With --size: number of nodes (default 1)")
      ->check(CLI::PositiveNumber)
      ->needs(by_size);
  std::vector<double> model_sizes;
  app.add_option("--model", model_sizes,
                 "With --size: print the cluster model's time of every candidate at these "
                 "message sizes (bytes) instead, as CSV: "
                 "model,collective,candidate,ranks,nodes,bytes,seconds")
      ->delimiter(',')
      ->needs(by_size);
  CLI11_PARSE(app, argc, argv);

  try {
    if (size > 0) {
      facts.comm_size = size;
      if (facts.node_count > size)
        throw tributary::UsageError("tributary-selection: --nodes exceeds --size");
      if (rpn->count() == 0)
        facts.ranks_per_node = (size + facts.node_count - 1) / facts.node_count;
      if (!model_sizes.empty()) {
        const auto& net = tributary::detail::ActiveNetwork();
        for (const auto& c : kCollectives) {
          if (which != "all" && which != c.name) continue;
          for (const auto& cand : tributary::detail::CandidatesOf(
                   tributary::SelectionTree::ClusterJson(), c.collective))
            for (double bytes : model_sizes)
              std::printf("model,%s,%s,%d,%d,%.0f,%.9g\n", c.name, cand.Name().c_str(),
                          facts.comm_size, facts.node_count, bytes,
                          tributary::detail::ModelTime(c.collective, cand, facts, bytes, net));
        }
        return 0;
      }
      if (file.empty())
        if (const char* env = std::getenv("TRIBUTARY_SELECTION")) file = env;
      // Without a file, the built-in tree for this shape: the cluster tree across nodes.
      const auto full = file.empty()
                            ? tributary::SelectionTree::Parse(
                                  tributary::SelectionTree::BuiltinJson(facts),
                                  facts.node_count > 1 ? "built-in cluster tree" : "built-in tree")
                            : tributary::SelectionTree::Parse(ReadFile(file), file);
      std::vector<tributary::SelectionTree> pruned;
      for (const auto& c : kCollectives) pruned.push_back(full.Prune(facts, c.collective));
      Print(facts, which, [&](tributary::Collective c) -> const tributary::SelectionTree& {
        return pruned[static_cast<std::size_t>(c)];
      });
      return 0;
    }
#if TRIBUTARY_HAVE_MPI
    MPI_Init(&argc, &argv);
    int status = 0;
    {
      tributary::ContextOptions options;
      options.selection_file = file;
      try {
        tributary::Context ctx(options);
        if (ctx.Rank() == 0)
          Print(ctx.Facts(), which,
                [&](tributary::Collective c) -> const tributary::SelectionTree& {
                  return ctx.Selection(c);
                });
      } catch (const std::exception& e) {
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) std::fprintf(stderr, "%s\n", e.what());
        status = 1;
      }
    }
    MPI_Finalize();
    return status;
#else
    std::fprintf(stderr,
                 "tributary-selection: built without MPI; describe the communicator "
                 "with --size\n");
    return 2;
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s: %s\n", "tributary-selection", e.what());
  return 1;
} catch (...) {
  std::fprintf(stderr, "tributary-selection: an unknown exception\n");
  return 1;
}
