# Installs Tributary into a prefix and builds tests/outside as a project of its own against
# it, given only CMAKE_PREFIX_PATH, as a user's code would be: its configure must not warn
# (Debian Kokkos's "does not support CXX extensions" included), and the five shapes of the
# failure-paths work run against the installed package: a propagated failure torn down in
# every order (failure_matrix), one hang report whichever watchdog fires (watchdog_report),
# the thread rule under MPI_THREAD_SINGLE (thread_rule), the README's loop on a rank with no
# blocks (empty_rank), at 1-3 ranks with the serial, threaded and a foreign executor.
# Variables: BUILD_DIR, PREFIX, WORK, PROJECT; optional CMAKE_ARGS (a ;-list).
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "outside test: '${cmd}' failed (${rc}):\n${out}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

# The test runs alone (RUN_SERIAL): its projects build on every core.
cmake_host_system_information(RESULT jobs QUERY NUMBER_OF_LOGICAL_CORES)
file(REMOVE_RECURSE "${PREFIX}" "${WORK}")
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}")
run(${CMAKE_COMMAND} -S "${PROJECT}" -B "${WORK}" "-DCMAKE_PREFIX_PATH=${PREFIX}" ${CMAKE_ARGS})
if(last_output MATCHES "CMake Warning|does not support CXX extensions")
  message(FATAL_ERROR "outside test: configuring a project against the package warns:\n${last_output}")
endif()
message(STATUS "outside test: a project configures against the package without a warning")
run(${CMAKE_COMMAND} --build "${WORK}" --parallel ${jobs})
include("${WORK}/tributary-mpi.cmake")
set(flags "")
if(MPI_KIND STREQUAL "openmpi")
  set(flags --oversubscribe)
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
endif()
foreach(np 1 2 3)
  foreach(executor serial threaded foreign)
    run(${MPIEXEC} -n ${np} ${flags} "${WORK}/empty_rank" --executor=${executor})
    run(${MPIEXEC} -n ${np} ${flags} "${WORK}/watchdog_report" --executor=${executor})
  endforeach()
  run(${MPIEXEC} -n ${np} ${flags} "${WORK}/thread_rule")
  foreach(cell "missing_list;objects_then_context;serial" "task_exception;objects_then_context;threaded"
               "never_started;context_first;foreign" "usage_error;new_context;serial")
    list(GET cell 0 fault)
    list(GET cell 1 teardown)
    list(GET cell 2 executor)
    execute_process(COMMAND ${MPIEXEC} -n ${np} ${flags} "${WORK}/failure_matrix" --fault=${fault}
                            --teardown=${teardown} --executor=${executor}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 60)
    if(NOT rc EQUAL 3)
      message(FATAL_ERROR "outside test: failure_matrix ${fault}/${teardown}/${executor} at "
                          "${np} ranks ended with ${rc}, not the program's own 3:\n${out}")
    endif()
  endforeach()
  message(STATUS "outside test: the five shapes passed at ${np} rank(s)")
endforeach()
