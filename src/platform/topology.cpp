// The machine's topology, from hwloc, in one place: where this rank's thread is bound
// (the node-aware form's hardware order) and the NUMA domain of each CPU (keyed
// collectives). Each call loads the topology afresh: HWLOC_SYNTHETIC may change between
// Contexts (the keyed tests use it).
#include "platform/topology.hpp"

#if TRIBUTARY_HAVE_HWLOC
#include <hwloc.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

namespace tributary::detail {

// Where this rank runs: the hwloc logical index of the first PU of the calling thread's
// binding (the thread that makes the Context, which drives the reductions; a launcher's
// binding covers it). hwloc numbers PUs depth-first, so ranks bound to PUs that share a
// core, a cache, a NUMA domain or a package have neighbouring positions. -1 when unknown:
// without hwloc, or when the thread is not bound to a strict subset of the machine.
int BoundPosition() {
  int position = -1;
#if TRIBUTARY_HAVE_HWLOC
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return position;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set && hwloc_topology_load(topo) == 0 &&
      hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_THREAD) == 0 && !hwloc_bitmap_iszero(set) &&
      !hwloc_bitmap_isincluded(hwloc_topology_get_allowed_cpuset(topo), set)) {
    const int first = hwloc_bitmap_first(set);
    if (hwloc_obj_t pu =
            first < 0 ? nullptr : hwloc_get_pu_obj_by_os_index(topo, static_cast<unsigned>(first)))
      position = static_cast<int>(pu->logical_index);
  }
  hwloc_bitmap_free(set);
  hwloc_topology_destroy(topo);
#endif
  return position;
}

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
      hwloc_obj_t numa =
          hwloc_get_next_obj_covering_cpuset_by_type(topo, pu->cpuset, HWLOC_OBJ_NUMANODE, nullptr);
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
