// Keyed (data-driven) collectives: the CPU -> NUMA domain map from hwloc.
#include "tributary/keyed.hpp"

#if TRIBUTARY_HAVE_HWLOC
#include <hwloc.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

namespace tributary::detail {

std::vector<int> CpuDomains() {
  std::vector<int> domain;
#if TRIBUTARY_HAVE_HWLOC
  // The topology of this machine, or a synthetic one named by HWLOC_SYNTHETIC (hwloc reads it).
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return domain;
  if (hwloc_topology_load(topo) == 0) {
    const int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    for (int i = 0; i < pus; ++i) {
      hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(i));
      if (!pu) continue;
      // The NUMA node whose cpuset holds this PU; without NUMA nodes, the package.
      int d = 0;
      hwloc_obj_t numa = hwloc_get_next_obj_covering_cpuset_by_type(topo, pu->cpuset, HWLOC_OBJ_NUMANODE, nullptr);
      if (numa) {
        d = static_cast<int>(numa->logical_index);
      } else if (hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu)) {
        d = static_cast<int>(pkg->logical_index);
      }
      if (pu->os_index >= domain.size()) domain.resize(pu->os_index + 1, 0);
      domain[pu->os_index] = d;
    }
  }
  hwloc_topology_destroy(topo);
#endif
  return domain;
}

int CurrentCpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

}  // namespace tributary::detail
