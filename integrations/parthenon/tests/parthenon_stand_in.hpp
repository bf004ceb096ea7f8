// What the layer takes from Parthenon, for its tests without a Parthenon checkout: Parthenon's
// own TaskStatus (src/basic_types.hpp at 79d5d30 declares exactly this enum). The layer
// returns this type, not tributary::TaskStatus.
#pragma once

namespace parthenon {
enum class TaskStatus { complete, incomplete, iterate, fail };
}  // namespace parthenon

#include "tributary/parthenon/reductions.hpp"
