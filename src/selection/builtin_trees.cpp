// The built-in trees: src/selection/trees/single_machine.json within one node (DefaultJson,
// single_machine_tree.cpp), the cost model's tree over simulation/cluster-selection.json
// across nodes (cluster_model.cpp); both compiled in by CMake. Apart from selection.cpp,
// which reads and checks trees and knows no model.
#include <string>

#include "selection/cluster_model.hpp"
#include "tributary/selection.hpp"

namespace tributary {

const std::string& SelectionTree::BuiltinJson(const SelectionFacts& facts) {
  return facts.node_count > 1 ? detail::ClusterTree(facts) : DefaultJson();
}

}  // namespace tributary
