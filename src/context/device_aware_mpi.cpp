// Whether the MPI library is handed device memory directly (ContextOptions::device_aware_mpi):
// the option, or what each rank's library says about the Kokkos backend in use.
#include "context/context_impl.hpp"
#include "tributary/errors.hpp"

#if TRIBUTARY_HAVE_KOKKOS
#include <Kokkos_Macros.hpp>
#endif
#if TRIBUTARY_HAVE_MPI && defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

namespace tributary::detail {

#if TRIBUTARY_HAVE_MPI
namespace {

// What this rank's MPI library says about device memory of the Kokkos backend in use, at
// run time (a library built with the extension may still run without GPU support).
bool LibraryReadsDeviceMemory() {
#if defined(KOKKOS_ENABLE_CUDA)
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() == 1;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int yes = 0;
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes) == MPI_SUCCESS && yes != 0;
#else
  return false;
#endif
#elif defined(KOKKOS_ENABLE_HIP)
#if defined(OMPI_HAVE_MPI_EXT_ROCM) && OMPI_HAVE_MPI_EXT_ROCM
  return MPIX_Query_rocm_support() == 1;
#elif defined(MPIX_GPU_SUPPORT_HIP)
  int yes = 0;
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP, &yes) == MPI_SUCCESS && yes != 0;
#else
  return false;
#endif
#else
  return false;  // a host backend: there is no device memory to hand over
#endif
}

}  // namespace

bool ResolveDeviceAwareMpi(MPI_Comm comm, DeviceAwareMpi option) {
  if (option == DeviceAwareMpi::on) return true;
  if (option != DeviceAwareMpi::detect) return false;
  int yes = LibraryReadsDeviceMemory() ? 1 : 0;
  CheckMpi(MPI_Allreduce(MPI_IN_PLACE, &yes, 1, MPI_INT, MPI_LAND, comm), "MPI_Allreduce");
  return yes != 0;
}
#endif

}  // namespace tributary::detail
