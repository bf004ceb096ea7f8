# Helpers that register test executables with CTest.
#
#   tributary_add_test(NAME n SOURCES ... [LIBS ...] [LABELS ...] [TIMEOUT s])
#     A plain single-process GoogleTest suite (gtest_main).
#
#   tributary_add_mpi_suite(NAME n SOURCES ... [LIBS ...] [LABELS ...] [TIMEOUT s]
#                           [RANKS 1 2 3 4] [EXTENDED 5 6 7 8] [RUN_SERIAL])
#     An MPI suite with Tributary's custom main, registered once per rank count as n.npK.
#     Labels: unit, mpi, npK; counts in EXTENDED get the label "extended" instead of "unit".
#     Without MPI (TRIBUTARY_ENABLE_MPI=OFF) only the 1-rank test is registered and runs
#     the executable directly. Under SimGrid SMPI (the smpi preset) tests run on a simulated
#     cluster with 2 ranks per node; tests/smpi registers the subset labelled "smpi".

set(TRIBUTARY_MPIEXEC_PREFLAGS "" CACHE STRING "Extra flags for mpiexec in tests")
set(TRIBUTARY_MPI_KIND "none")
set(_tributary_mpi_env "")
if(TRIBUTARY_ENABLE_MPI)
  execute_process(COMMAND "${MPIEXEC_EXECUTABLE}" --version
                  OUTPUT_VARIABLE _tributary_mpiexec_version ERROR_VARIABLE _tributary_mpiexec_version)
  if(_tributary_mpiexec_version MATCHES "Open MPI|OpenRTE")
    set(TRIBUTARY_MPI_KIND "openmpi")
    # Open MPI only: allow more ranks than cores, and running as root (CI containers).
    set(_tributary_mpi_launch_flags --oversubscribe)
    set(_tributary_mpi_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
                           OMPI_MCA_rmaps_base_oversubscribe=1)
  elseif(_tributary_mpiexec_version MATCHES "SimGrid")
    # simulation/smpirun.sh: simulated ranks in one process. Two ranks per node, so that
    # three and four ranks span nodes and the node-aware schedules have leaders to talk to.
    set(TRIBUTARY_MPI_KIND "smpi")
    set(_tributary_mpi_launch_flags "")
    set(_tributary_mpi_env TRIBUTARY_SMPI_RANKS_PER_NODE=2)
  elseif(_tributary_mpiexec_version MATCHES "HYDRA|MPICH")
    set(TRIBUTARY_MPI_KIND "mpich")
    set(_tributary_mpi_launch_flags "")
  else()
    set(TRIBUTARY_MPI_KIND "unknown")
    set(_tributary_mpi_launch_flags "")
  endif()
  message(STATUS "Tributary: tests launch with ${MPIEXEC_EXECUTABLE} (${TRIBUTARY_MPI_KIND})")
endif()
set(TRIBUTARY_MPI_KIND "${TRIBUTARY_MPI_KIND}" CACHE INTERNAL "")

# The command that runs EXE on NP ranks, as a list, for tests registered by hand.
function(tributary_mpi_command out np)
  if(TRIBUTARY_ENABLE_MPI)
    set(${out} "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} ${np} ${_tributary_mpi_launch_flags}
        ${TRIBUTARY_MPIEXEC_PREFLAGS} ${MPIEXEC_PREFLAGS} PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# Environment every MPI test needs (Open MPI's run-as-root variables).
function(tributary_mpi_environment test)
  if(_tributary_mpi_env)
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT ${_tributary_mpi_env})
  endif()
endfunction()

function(tributary_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest_main tributary_warnings)
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "unit;${T_LABELS}")
endfunction()

function(tributary_add_mpi_suite)
  cmake_parse_arguments(T "RUN_SERIAL" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS;RANKS;EXTENDED" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  if(NOT T_RANKS AND NOT T_EXTENDED)
    set(T_RANKS 1 2 3 4)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} tributary_test_main tributary_warnings)
  if(NOT TRIBUTARY_ENABLE_MPI)
    set(T_RANKS 1)
    set(T_EXTENDED "")
  endif()
  foreach(np IN LISTS T_RANKS T_EXTENDED)
    set(test ${T_NAME}.np${np})
    tributary_mpi_command(launch ${np})
    add_test(NAME ${test} COMMAND ${launch} $<TARGET_FILE:${T_NAME}> --tributary-np=${np})
    if(np IN_LIST T_EXTENDED)
      set(kind extended)
    else()
      set(kind unit)
    endif()
    set_tests_properties(${test} PROPERTIES TIMEOUT ${T_TIMEOUT} PROCESSORS ${np}
                         LABELS "${kind};mpi;np${np};${T_LABELS}")
    if(T_RUN_SERIAL)
      set_tests_properties(${test} PROPERTIES RUN_SERIAL TRUE)
    endif()
    tributary_mpi_environment(${test})
  endforeach()
endfunction()

# tributary_add_command_line_test(target [MPI])
#   Registers cli.<target>: `target --help` exits 0 and prints the usage, and
#   `target --no-such-option` exits non-zero with an error that names the option. With MPI
#   (and an MPI build) the program runs on one rank through the launcher.
function(tributary_add_command_line_test target)
  cmake_parse_arguments(T "MPI" "" "" ${ARGN})
  set(launch "")
  if(T_MPI AND TRIBUTARY_ENABLE_MPI)
    tributary_mpi_command(launch 1)
  endif()
  string(REPLACE ";" "|" launch "${launch}")
  add_test(NAME cli.${target}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${target}> "-DLAUNCH=${launch}"
                   -P ${PROJECT_SOURCE_DIR}/tests/support/check_command_line.cmake)
  set_tests_properties(cli.${target} PROPERTIES LABELS "unit;cli;np1" TIMEOUT 120 PROCESSORS 1
                       PASS_REGULAR_EXPRESSION "cli: .* rejects --no-such-option")
  tributary_mpi_environment(cli.${target})
endfunction()
