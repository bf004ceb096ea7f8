# The installed package: find_package(Tributary CONFIG) from another project.
#
# The package brings the MPI library Tributary was built with: its include directories and
# library files are recorded here and become the imported target Tributary::mpi in the
# user's project, so a C++-only project finds the same MPI without FindMPI (which would
# need the C language and could pick another installed MPI, whose symbols do not match).

set(TRIBUTARY_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/Tributary")
# TRIBUTARY_PKG_MPI_KIND and _NAME, the Kokkos version and backends: TributaryAbi.cmake.
set(TRIBUTARY_PKG_MPI_COMPILER "")
foreach(property INCLUDE_DIRECTORIES LINK_LIBRARIES COMPILE_OPTIONS COMPILE_DEFINITIONS
                 LINK_OPTIONS)
  set(TRIBUTARY_PKG_MPI_${property} "")
endforeach()
if(TRIBUTARY_ENABLE_MPI)
  foreach(property INCLUDE_DIRECTORIES LINK_LIBRARIES COMPILE_OPTIONS COMPILE_DEFINITIONS
                   LINK_OPTIONS)
    get_target_property(value MPI::MPI_C INTERFACE_${property})
    if(value)
      set(TRIBUTARY_PKG_MPI_${property} "${value}")
    endif()
  endforeach()
  if(MPI_CXX_COMPILER)
    set(TRIBUTARY_PKG_MPI_COMPILER "${MPI_CXX_COMPILER}")
  else()
    set(TRIBUTARY_PKG_MPI_COMPILER "${MPI_C_COMPILER}")
  endif()
  if(TRIBUTARY_PKG_MPI_LINK_LIBRARIES)
    message(STATUS "Tributary: the package brings ${TRIBUTARY_PKG_MPI_NAME} "
                   "(${TRIBUTARY_PKG_MPI_LINK_LIBRARIES})")
  else()
    # The compiler is an MPI wrapper (FindMPI then names no library): a project that uses
    # the package must compile with the same wrapper.
    message(STATUS "Tributary: the compiler itself brings ${TRIBUTARY_PKG_MPI_NAME}; "
                   "projects using the package must compile with ${CMAKE_CXX_COMPILER}")
  endif()
endif()

install(EXPORT TributaryTargets NAMESPACE Tributary:: DESTINATION "${TRIBUTARY_CMAKE_DIR}")
configure_package_config_file(cmake/TributaryConfig.cmake.in
  "${PROJECT_BINARY_DIR}/TributaryConfig.cmake" INSTALL_DESTINATION "${TRIBUTARY_CMAKE_DIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/TributaryConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/TributaryConfig.cmake"
              "${PROJECT_BINARY_DIR}/TributaryConfigVersion.cmake"
              cmake/TributaryDependencies.cmake
        DESTINATION "${TRIBUTARY_CMAKE_DIR}")
