// Fuzz target for the selection-tree loader (scripts/fuzz-selection.sh runs it under
// libFuzzer; tests/fuzz/replay_main.cpp replays the seed corpus in the normal build).
//
// Any input must either load or be refused with UsageError; nothing else may escape, crash
// or hang. A tree that loads must prune for every collective and a range of communicators,
// evaluate on a range of inputs, and print as JSON that loads again and chooses the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tributary/errors.hpp"
#include "tributary/selection.hpp"

namespace {

using tributary::Collective;
using tributary::SelectionTree;

bool Same(const tributary::SelectionChoice& a, const tributary::SelectionChoice& b) {
  return a.kind == b.kind && a.params.radix == b.params.radix &&
         a.params.segment_bytes == b.params.segment_bytes &&
         a.params.node_aware == b.params.node_aware;
}

void Check(const SelectionTree& tree, const SelectionTree& again) {
  for (int size : {1, 2, 3, 4, 7, 16, 1000}) {
    tributary::SelectionFacts facts;
    facts.comm_size = size;
    facts.ranks_per_node = size > 4 ? 4 : size;
    facts.node_count = (size + 3) / 4;
    for (auto c : {Collective::allreduce, Collective::reduce, Collective::allgather}) {
      const SelectionTree p = tree.Prune(facts, c), q = again.Prune(facts, c);
      for (std::size_t bytes :
           {std::size_t(0), std::size_t(8), std::size_t(4096), std::size_t(1) << 30})
        for (int flags = 0; flags < 16; ++flags) {
          tributary::SelectionInput in;
          in.bytes = bytes;
          in.builtin_op = flags & 1;
          in.commutative = flags & 2;
          in.memory = flags & 4 ? tributary::MemorySpace::device : tributary::MemorySpace::host;
          in.determinism = flags & 8 ? 2 : 0;
          const auto choice = p.Select(in);
          if (!Same(choice, q.Select(in)) || !Same(choice, tree.Prune(facts, c).Select(in)))
            std::abort();
          if (!tributary::Supports(choice.kind, c)) std::abort();
          if (!in.commutative && !in.builtin_op && !tributary::IsOrderKeeping(choice.kind))
            std::abort();
        }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  SelectionTree tree;
  try {
    tree = SelectionTree::Parse(text, "fuzz");
  } catch (const tributary::UsageError&) {
    return 0;  // refused with a message: fine
  }
  // Printed and loaded again, the tree must choose the same everywhere.
  const SelectionTree again = SelectionTree::Parse(tree.ToJson(), "round trip");
  Check(tree, again);
  return 0;
}
