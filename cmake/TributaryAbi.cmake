# What a program compiled against Tributary's headers must share with the library: the MPI
# library and the Kokkos version and backends (the TRIBUTARY_ENABLE_* options themselves are
# recorded in config.hpp and in the package). Sets, for config.hpp.in, TributaryPackage.cmake
# and the pkg-config files:
#   TRIBUTARY_PKG_MPI_KIND, TRIBUTARY_PKG_MPI_NAME   openmpi / mpich / other, "Open MPI 4.1.4"
#   TRIBUTARY_PKG_KOKKOS_VERSION, _DEVICES            "4.6.01", "OPENMP;SERIAL" (with Kokkos)
#   TRIBUTARY_ABI_CHECKS                              preprocessor checks for config.hpp

# Sets TRIBUTARY_PKG_MPI_KIND (openmpi, mpich or other) and TRIBUTARY_PKG_MPI_NAME ("Open
# MPI 4.1.4", "MPICH 4.0.2") from mpi.h of the MPI that MPI::MPI_C uses.
function(tributary_describe_mpi)
  set(kind other)
  set(name "")
  get_target_property(dirs MPI::MPI_C INTERFACE_INCLUDE_DIRECTORIES)
  foreach(dir IN LISTS MPI_C_HEADER_DIR dirs)
    if(name OR NOT EXISTS "${dir}/mpi.h")
      continue()
    endif()
    file(STRINGS "${dir}/mpi.h" defines
         REGEX "^#define (MPICH_VERSION|OMPI_(MAJOR|MINOR|RELEASE)_VERSION)[ \t]")
    if(defines MATCHES "MPICH_VERSION[ \t]+\"([^\"]*)\"")
      set(kind mpich)
      set(name "MPICH ${CMAKE_MATCH_1}")
    elseif(defines MATCHES "OMPI_MAJOR_VERSION[ \t]+([0-9]+)")
      set(kind openmpi)
      set(major "${CMAKE_MATCH_1}")
      set(name "Open MPI ${major}")
      foreach(part MINOR RELEASE)
        if(defines MATCHES "OMPI_${part}_VERSION[ \t]+([0-9]+)")
          string(APPEND name ".${CMAKE_MATCH_1}")
        endif()
      endforeach()
      set(TRIBUTARY_PKG_OMPI_MAJOR "${major}" PARENT_SCOPE)
    endif()
  endforeach()
  if(NOT name)
    set(name "the MPI library of ${MPI_C_COMPILER}")
  endif()
  set(TRIBUTARY_PKG_MPI_KIND "${kind}" PARENT_SCOPE)
  set(TRIBUTARY_PKG_MPI_NAME "${name}" PARENT_SCOPE)
endfunction()

set(TRIBUTARY_PKG_MPI_KIND "")
set(TRIBUTARY_PKG_MPI_NAME "")
set(TRIBUTARY_PKG_KOKKOS_VERSION "")
set(TRIBUTARY_PKG_KOKKOS_DEVICES "")
set(TRIBUTARY_ABI_CHECKS "")
if(TRIBUTARY_ENABLE_MPI)
  tributary_describe_mpi()
  # A translation unit whose mpi.h is another MPI's would link (or crash) obscurely.
  set(_tributary_wrong_mpi "this Tributary was built with ${TRIBUTARY_PKG_MPI_NAME}, but this translation unit's mpi.h belongs to another MPI library: compile with that MPI's compiler wrapper or include directory")
  if(TRIBUTARY_PKG_MPI_KIND STREQUAL "openmpi")
    string(APPEND TRIBUTARY_ABI_CHECKS
      "#if !defined(OMPI_MAJOR_VERSION) || OMPI_MAJOR_VERSION != ${TRIBUTARY_PKG_OMPI_MAJOR}\n"
      "#error \"tributary: ${_tributary_wrong_mpi}\"\n#endif\n")
  elseif(TRIBUTARY_PKG_MPI_KIND STREQUAL "mpich")
    string(APPEND TRIBUTARY_ABI_CHECKS
      "#if !defined(MPICH_VERSION)\n#error \"tributary: ${_tributary_wrong_mpi}\"\n#endif\n")
  endif()
endif()
if(TRIBUTARY_ENABLE_KOKKOS AND Kokkos_VERSION)
  set(TRIBUTARY_PKG_KOKKOS_VERSION "${Kokkos_VERSION}")
  set(TRIBUTARY_PKG_KOKKOS_DEVICES "${Kokkos_DEVICES}")
  string(REGEX MATCH "^([0-9]+)\\.([0-9]+)\\.([0-9]+)" _tributary_v "${Kokkos_VERSION}")
  if(_tributary_v)
    math(EXPR _tributary_kokkos_number
         "${CMAKE_MATCH_1} * 10000 + ${CMAKE_MATCH_2} * 100 + ${CMAKE_MATCH_3}")
    # Views, execution spaces and the kernels Tributary instantiates change layout between
    # Kokkos versions and backends.
    string(APPEND TRIBUTARY_ABI_CHECKS
      "#if defined(KOKKOS_VERSION) && KOKKOS_VERSION != ${_tributary_kokkos_number}\n"
      "#error \"tributary: this Tributary was built with Kokkos ${Kokkos_VERSION}; this translation unit includes another Kokkos version\"\n"
      "#endif\n")
  endif()
  if(Kokkos_DEVICES)
    foreach(backend CUDA HIP SYCL OPENMPTARGET OPENMP THREADS HPX SERIAL)
      set(on 0)
      if(backend IN_LIST Kokkos_DEVICES)
        set(on 1)
      endif()
      string(APPEND TRIBUTARY_ABI_CHECKS
        "#if defined(KOKKOS_VERSION) && defined(KOKKOS_ENABLE_${backend}) != ${on}\n"
        "#error \"tributary: this Tributary was built with the Kokkos backends ${Kokkos_DEVICES}; this translation unit's Kokkos differs in ${backend}\"\n"
        "#endif\n")
    endforeach()
  endif()
endif()
