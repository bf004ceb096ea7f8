// The machine's topology (hwloc), for the files of src/ that need it.
#pragma once

#include <vector>

#include "tributary/config.hpp"

namespace tributary::detail {

/// The hwloc logical index of the first PU the calling thread is bound to; -1 without hwloc
/// or when the thread is not bound to a strict subset of the machine.
int BoundPosition();
/// For each CPU (by OS index), its NUMA domain (the package without NUMA nodes); empty
/// without hwloc.
std::vector<int> CpuDomains();
/// The CPU the calling thread runs on, or -1.
int CurrentCpu();

}  // namespace tributary::detail
