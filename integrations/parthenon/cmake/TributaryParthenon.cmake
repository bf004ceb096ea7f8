# Switches an unchanged Parthenon build to Tributary's reductions. Give it to Parthenon's
# configure as CMAKE_PROJECT_INCLUDE (CMake runs it inside Parthenon's project() call), with
# an installed Tributary (built with MPI and with the Kokkos Parthenon uses) on
# CMAKE_PREFIX_PATH:
#
#   cmake -S parthenon -B build -DPARTHENON_IMPORT_KOKKOS=ON -DKokkos_ROOT=<kokkos> \
#     -DCMAKE_PREFIX_PATH="<tributary>;<kokkos>" \
#     -DCMAKE_PROJECT_INCLUDE=<this repository>/integrations/parthenon/cmake/TributaryParthenon.cmake
#
# It
#  - puts integrations/parthenon/include before every other include directory of every
#    target Parthenon makes, so that Parthenon's `#include <utils/reductions.hpp>` finds
#    Tributary's (a directory property: targets copy it when they are made, ahead of their
#    own directories);
#  - builds tributary_parthenon (the shared Context and its teardown, and the MPI_Init that
#    asks for MPI_THREAD_SERIALIZED) and links it into every executable of the build, once
#    all are made (Parthenon's library itself does not include utils/reductions.hpp, and
#    stays free of it, so that its install export is unchanged);
#  - with TRIBUTARY_PARTHENON_MPI_INIT=OFF leaves MPI_Init alone (for an application that
#    calls MPI_Init_thread with MPI_THREAD_SERIALIZED itself).
cmake_minimum_required(VERSION 3.19)

if(TARGET tributary_parthenon)
  return()
endif()

get_filename_component(_tributary_parthenon_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
option(TRIBUTARY_PARTHENON_MPI_INIT
       "Link Tributary's MPI_Init, which asks for MPI_THREAD_SERIALIZED" ON)

find_package(Tributary CONFIG REQUIRED)
if(NOT Tributary_MPI_KIND OR Tributary_MPI_KIND STREQUAL "none")
  message(FATAL_ERROR "Tributary's Parthenon layer needs a Tributary built with MPI")
endif()

add_library(tributary_parthenon STATIC "${_tributary_parthenon_root}/src/runtime.cpp")
target_include_directories(tributary_parthenon PUBLIC "${_tributary_parthenon_root}/include")
target_link_libraries(tributary_parthenon PUBLIC Tributary::tributary)
target_compile_features(tributary_parthenon PUBLIC cxx_std_17)
if(TRIBUTARY_PARTHENON_MPI_INIT)
  # An object library: its MPI_Init is part of every executable that links it, ahead of the
  # MPI library's (an archive member would only be taken for a reference still open when
  # the linker reads the archive).
  add_library(tributary_parthenon_mpi_init OBJECT "${_tributary_parthenon_root}/src/mpi_init.cpp")
  target_link_libraries(tributary_parthenon_mpi_init PRIVATE Tributary::mpi)
  target_link_libraries(tributary_parthenon INTERFACE
                        "$<TARGET_OBJECTS:tributary_parthenon_mpi_init>")
endif()

include_directories(BEFORE "${_tributary_parthenon_root}/include")

# Links the layer into every executable under `dir`. LINK_LIBRARIES directly: Parthenon's
# own target_link_libraries calls may use either signature.
function(_tributary_parthenon_link_executables dir)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      set_property(TARGET ${target} APPEND PROPERTY LINK_LIBRARIES tributary_parthenon)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    _tributary_parthenon_link_executables("${subdir}")
  endforeach()
endfunction()
cmake_language(DEFER CALL _tributary_parthenon_link_executables "${CMAKE_CURRENT_SOURCE_DIR}")
message(STATUS "Tributary: Parthenon's reductions come from ${_tributary_parthenon_root}/include "
               "(Tributary ${Tributary_VERSION}, ${Tributary_MPI_NAME}); "
               "MPI_Init asks for MPI_THREAD_SERIALIZED: ${TRIBUTARY_PARTHENON_MPI_INIT}")
