# Finds Tributary's dependencies. Used by the build and, installed, by TributaryConfig.cmake
# so that a user's find_package(Tributary) finds the same libraries. Expects the
# TRIBUTARY_ENABLE_* variables to be set. MPI is found here only for the build: the installed
# package brings the MPI it was built with itself (TributaryConfig.cmake, Tributary::mpi).
include(CMakeFindDependencyMacro)

if(TRIBUTARY_ENABLE_MPI AND NOT _tributary_in_package)
  find_dependency(MPI COMPONENTS C)
endif()

find_dependency(Threads)

if(TRIBUTARY_ENABLE_KOKKOS)
  # Kokkos configurations without C++ extensions (Debian's 3.4 among them) warn and force
  # CMAKE_CXX_EXTENSIONS off when it is undefined; say it first, so that a project that
  # left it alone sees no warning. A project that asked for extensions keeps Kokkos' warning.
  if(NOT DEFINED CMAKE_CXX_EXTENSIONS)
    set(CMAKE_CXX_EXTENSIONS OFF)
  endif()
  find_dependency(Kokkos)
  # Debian's Kokkos 3.4 (Trilinos build) exports a Kokkos::kokkos target whose include
  # directory does not exist (/usr/lib/include); the headers are in ${Kokkos_INCLUDE_DIRS}.
  # Repair it here, the one place that knows about it.
  if(TARGET Kokkos::kokkos AND Kokkos_INCLUDE_DIRS)
    get_target_property(_tributary_kokkos_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
    set(_tributary_kokkos_fixed "")
    foreach(dir IN LISTS _tributary_kokkos_inc)
      if(EXISTS "${dir}")
        list(APPEND _tributary_kokkos_fixed "${dir}")
      endif()
    endforeach()
    foreach(dir IN LISTS Kokkos_INCLUDE_DIRS)
      get_filename_component(dir "${dir}" REALPATH)
      list(APPEND _tributary_kokkos_fixed "${dir}")
    endforeach()
    list(REMOVE_DUPLICATES _tributary_kokkos_fixed)
    set_target_properties(Kokkos::kokkos PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${_tributary_kokkos_fixed}")
  endif()
endif()

if(TRIBUTARY_ENABLE_HWLOC)
  find_dependency(PkgConfig)
  pkg_check_modules(TRIBUTARY_HWLOC REQUIRED IMPORTED_TARGET hwloc)
  if(NOT TARGET Tributary::hwloc)
    add_library(Tributary::hwloc INTERFACE IMPORTED)
    target_link_libraries(Tributary::hwloc INTERFACE PkgConfig::TRIBUTARY_HWLOC)
  endif()
endif()
