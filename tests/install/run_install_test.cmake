# Installs the build into a prefix inside the build tree, then configures, builds and runs
# a separate project (and the example apps) against it with find_package(Tributary).
# Variables: BUILD_DIR, PREFIX, CONSUMER, EXAMPLES, WORK, LAUNCH (a ;-list), CMAKE_ARGS.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "install test: '${cmd}' failed (${rc})")
  endif()
endfunction()

file(REMOVE_RECURSE "${PREFIX}" "${WORK}")
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}")
foreach(project consumer examples)
  if(project STREQUAL consumer)
    set(src "${CONSUMER}")
  else()
    set(src "${EXAMPLES}")
  endif()
  run(${CMAKE_COMMAND} -S "${src}" -B "${WORK}/${project}" "-DCMAKE_PREFIX_PATH=${PREFIX}"
      ${CMAKE_ARGS})
  run(${CMAKE_COMMAND} --build "${WORK}/${project}")
endforeach()
run(${LAUNCH} "${WORK}/consumer/consumer")
run(${LAUNCH} "${WORK}/examples/hello_reduce" 2)
message(STATUS "install test: consumer and examples built and ran against ${PREFIX}")
