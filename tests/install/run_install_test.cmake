# Installs a Tributary build into a prefix, then configures, builds and runs a separate
# C++-only project (and, with EXAMPLES, the example apps) against it, given only
# CMAKE_PREFIX_PATH, as a user would. The consumer links the MPI the package was built with
# (checked with ldd) and runs at 1, 2 and 3 ranks with the launcher the package names. A
# shared build (BUILD_SHARED_LIBS=ON) must install versioned libraries with an SONAME, and
# the consumer must load them from the prefix. Components the build lacks (the other kind
# of library; Kokkos where it is off) and another Kokkos version fail to configure, naming
# what Tributary was built with.
# With OTHER_MPI_CXX (another MPI's mpicxx), a consumer that finds that MPI before or after
# Tributary must fail to configure with a message naming Tributary's MPI; with SAME_MPI_CXX,
# one that finds Tributary's own MPI must configure.
# Variables: BUILD_DIR, PREFIX, WORK, CONSUMER; optional: EXAMPLES, CMAKE_ARGS (a ;-list),
# SAME_MPI_CXX, OTHER_MPI_CXX.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "install test: '${cmd}' failed (${rc})")
  endif()
endfunction()

# The test runs alone (RUN_SERIAL): its projects build on every core.
cmake_host_system_information(RESULT jobs QUERY NUMBER_OF_LOGICAL_CORES)
file(REMOVE_RECURSE "${PREFIX}" "${WORK}")
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}")
set(projects consumer)
if(EXAMPLES)
  list(APPEND projects examples)
endif()
foreach(project IN LISTS projects)
  if(project STREQUAL consumer)
    set(src "${CONSUMER}")
  else()
    set(src "${EXAMPLES}")
  endif()
  run(${CMAKE_COMMAND} -S "${src}" -B "${WORK}/${project}" "-DCMAKE_PREFIX_PATH=${PREFIX}"
      ${CMAKE_ARGS})
  run(${CMAKE_COMMAND} --build "${WORK}/${project}" --parallel ${jobs})
endforeach()

# The MPI the package names, and the launcher that goes with it.
include("${WORK}/consumer/tributary-mpi.cmake")

# Shared libraries: libtributary.so -> .so.MAJOR.MINOR (the SONAME) -> .so.VERSION, and the
# consumer loads them from the prefix.
file(GLOB libs "${PREFIX}/lib*/libtributary.so*" "${PREFIX}/lib*/*/libtributary.so*")
file(GLOB archives "${PREFIX}/lib*/libtributary.a" "${PREFIX}/lib*/*/libtributary.a")
if(SHARED)
  if(archives OR NOT libs)
    message(FATAL_ERROR "install test: a shared build installed ${archives}, not libtributary.so")
  endif()
  find_program(readelf readelf)
  foreach(name tributary tributary_tasks)
    file(GLOB real "${PREFIX}/lib*/lib${name}.so.*.*.*" "${PREFIX}/lib*/*/lib${name}.so.*.*.*")
    if(NOT real)
      message(FATAL_ERROR "install test: no versioned lib${name}.so.X.Y.Z in ${PREFIX}")
    endif()
    execute_process(COMMAND ${readelf} -d ${real} OUTPUT_VARIABLE dynamic)
    if(NOT dynamic MATCHES "SONAME\\)[^\n]*\\[(lib${name}\\.so\\.[0-9]+\\.[0-9]+)\\]")
      message(FATAL_ERROR "install test: ${real} has no SONAME lib${name}.so.MAJOR.MINOR:\n${dynamic}")
    endif()
    message(STATUS "install test: ${real} has the SONAME ${CMAKE_MATCH_1}")
  endforeach()
  find_program(ldd ldd)
  execute_process(COMMAND ${ldd} "${WORK}/consumer/consumer" OUTPUT_VARIABLE linked)
  string(REGEX MATCH "libtributary\\.so[^\n]*" line "${linked}")
  string(FIND "${line}" "=> ${PREFIX}/" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "install test: the consumer does not load libtributary.so from ${PREFIX}:\n${linked}")
  endif()
  message(STATUS "install test: the consumer loads libtributary.so from the prefix")
elseif(libs OR NOT archives)
  message(FATAL_ERROR "install test: a static build installed ${libs}")
endif()

# Components: the kind of library this build does not have, and Kokkos where it is off, fail
# to configure with a message naming the option; the ones it has configure.
set(have static)
set(lack shared)
if(SHARED)
  set(have shared)
  set(lack static)
endif()
if(KOKKOS)
  list(APPEND have kokkos)
else()
  list(APPEND lack kokkos)
endif()
run(${CMAKE_COMMAND} -S "${CONSUMER}" -B "${WORK}/components-have" "-DCMAKE_PREFIX_PATH=${PREFIX}"
    ${CMAKE_ARGS} "-DTRIBUTARY_CONSUMER_COMPONENTS=${have};tasks")
foreach(component IN LISTS lack)
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${CONSUMER}" -B "${WORK}/components-${component}"
                          "-DCMAKE_PREFIX_PATH=${PREFIX}" ${CMAKE_ARGS}
                          -DTRIBUTARY_CONSUMER_COMPONENTS=${component}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX REPLACE "[ \t\r\n]+" " " flat "${out}")
  if(rc EQUAL 0 OR NOT flat MATCHES "the component '${component}' needs a Tributary built with")
    message(FATAL_ERROR "install test: the component ${component}, which this build lacks, "
                        "configured or failed without naming it:\n${out}")
  endif()
  message(STATUS "install test: the missing component ${component} fails, naming the option")
endforeach()

# Another Kokkos than Tributary's (a package that calls itself Kokkos 9.9.9): refused.
if(KOKKOS AND KOKKOS_VERSION)
  set(fake "${WORK}/fake-kokkos")
  file(WRITE "${fake}/KokkosConfigVersion.cmake"
       "set(PACKAGE_VERSION 9.9.9)\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n")
  file(WRITE "${fake}/KokkosConfig.cmake"
       "set(Kokkos_DEVICES SERIAL)\nadd_library(Kokkos::kokkos INTERFACE IMPORTED)\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${CONSUMER}" -B "${WORK}/other-kokkos"
                          "-DCMAKE_PREFIX_PATH=${PREFIX}" ${CMAKE_ARGS} "-DKokkos_DIR=${fake}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX REPLACE "[ \t\r\n]+" " " flat "${out}")
  if(rc EQUAL 0 OR NOT flat MATCHES "Tributary was built with Kokkos ${KOKKOS_VERSION}.*Kokkos 9\\.9\\.9")
    message(FATAL_ERROR "install test: a project with Kokkos 9.9.9 configured, or failed "
                        "without naming Tributary's Kokkos ${KOKKOS_VERSION}:\n${out}")
  endif()
  message(STATUS "install test: another Kokkos (9.9.9) fails, naming Kokkos ${KOKKOS_VERSION}")
endif()

set(ranks 1)
set(launch_flags "")
if(MPI_KIND)
  message(STATUS "install test: the package brings ${MPI_NAME} (${MPI_KIND}), launched with ${MPIEXEC}")
  set(ranks 1 2 3)
  if(MPI_KIND STREQUAL "openmpi")
    set(launch_flags --oversubscribe)
    set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
    set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
  endif()
  find_program(ldd ldd)
  if(ldd AND MPI_KIND MATCHES "^(openmpi|mpich)$")
    execute_process(COMMAND ${ldd} "${WORK}/consumer/consumer" OUTPUT_VARIABLE linked)
    set(expected "libmpi\\.so")
    set(forbidden "libmpich")
    if(MPI_KIND STREQUAL "mpich")
      set(expected "libmpich")
      set(forbidden "libmpi\\.so")
    endif()
    if(NOT linked MATCHES "${expected}" OR linked MATCHES "${forbidden}")
      message(FATAL_ERROR "install test: the consumer does not link ${MPI_NAME} alone:\n${linked}")
    endif()
    message(STATUS "install test: the consumer links ${MPI_NAME} only")
  endif()
endif()

foreach(np IN LISTS ranks)
  set(launch "")
  if(MPI_KIND)
    set(launch "${MPIEXEC}" -n ${np} ${launch_flags})
  endif()
  run(${launch} "${WORK}/consumer/consumer")
  if(EXAMPLES)
    run(${launch} "${WORK}/examples/hello_reduce" 2)
  endif()
endforeach()

# A consumer that also finds MPI itself: the same MPI configures, another one does not.
foreach(when BEFORE AFTER)
  if(SAME_MPI_CXX)
    run(${CMAKE_COMMAND} -S "${CONSUMER}" -B "${WORK}/same-${when}" "-DCMAKE_PREFIX_PATH=${PREFIX}"
        ${CMAKE_ARGS} -DTRIBUTARY_CONSUMER_FIND_MPI=${when} "-DMPI_CXX_COMPILER=${SAME_MPI_CXX}")
  endif()
  if(OTHER_MPI_CXX)
    execute_process(COMMAND ${CMAKE_COMMAND} -S "${CONSUMER}" -B "${WORK}/other-${when}"
                            "-DCMAKE_PREFIX_PATH=${PREFIX}" ${CMAKE_ARGS}
                            -DTRIBUTARY_CONSUMER_FIND_MPI=${when} "-DMPI_CXX_COMPILER=${OTHER_MPI_CXX}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    string(REGEX REPLACE "[ \t\r\n]+" " " flat "${out}")
    if(rc EQUAL 0 OR NOT flat MATCHES "Tributary was built with ${MPI_NAME}")
      message(FATAL_ERROR "install test: a consumer that finds ${OTHER_MPI_CXX}'s MPI ${when} "
                          "Tributary configured, or failed without naming ${MPI_NAME}:\n${out}")
    endif()
    message(STATUS "install test: finding another MPI ${when} Tributary fails, naming ${MPI_NAME}")
  endif()
endforeach()
message(STATUS "install test: consumer and examples built and ran against ${PREFIX}")
