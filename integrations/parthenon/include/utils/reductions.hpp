// Stands in for Parthenon's src/utils/reductions.hpp when this folder comes before
// Parthenon's src/ on the include path (Parthenon includes it as <utils/reductions.hpp>,
// which searches the include path in order; cmake/TributaryParthenon.cmake puts this
// folder first). It includes what Parthenon's header includes, so that the files relying
// on those includes still build, and then Parthenon's reduction types on Tributary.
#ifndef UTILS_REDUCTIONS_HPP_
#define UTILS_REDUCTIONS_HPP_

#include <basic_types.hpp>
#include <config.hpp>
#include <globals.hpp>
#include <kokkos_abstraction.hpp>
#include <memory>
#include <parthenon_mpi.hpp>
#include <utils/cleantypes.hpp>
#include <utils/concepts_lite.hpp>
#include <utils/error_checking.hpp>
#include <utils/mpi_types.hpp>
#include <vector>

#ifndef MPI_PARALLEL
#error "Tributary's Parthenon layer needs Parthenon built with MPI"
#endif

#include "tributary/parthenon/reductions.hpp"

namespace parthenon {

/// As in Parthenon: the MPI datatype of a contiguous container's elements.
template <class U>
MPI_Datatype GetContainerMPIType(const U &v) {
  using value_type = decltype(contiguous_container::value_type(v));
  return MPITypeMap<value_type>::type();
}

}  // namespace parthenon

#endif  // UTILS_REDUCTIONS_HPP_
