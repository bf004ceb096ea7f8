# Adds two-dots (two_dots/: its own package, driver and main) to a Parthenon build: two dot
# products reduced through one AllReduce of a summable pair filled by one kernel per
# partition. scripts/run-parthenon.sh gives it, through ParthenonReport.cmake, to the stock
# and the Tributary build alike; Parthenon's files are not changed.
cmake_minimum_required(VERSION 3.19)
get_filename_component(_parthenon_two_dots_root "${CMAKE_CURRENT_LIST_DIR}/../two_dots" ABSOLUTE)

function(_parthenon_two_dots_add)
  if(NOT TARGET Parthenon::parthenon)
    message(WARNING "ParthenonTwoDots: no Parthenon::parthenon target; no two-dots")
    return()
  endif()
  add_executable(two-dots "${_parthenon_two_dots_root}/two_dots.cpp"
                          "${_parthenon_two_dots_root}/two_dots_driver.cpp")
  target_include_directories(two-dots PRIVATE "${_parthenon_two_dots_root}")
  target_link_libraries(two-dots PRIVATE Parthenon::parthenon)
  if(TARGET tributary_parthenon)  # the Tributary build (cmake/TributaryParthenon.cmake)
    target_link_libraries(two-dots PRIVATE tributary_parthenon)
  endif()
endfunction()
cmake_language(DEFER CALL _parthenon_two_dots_add)
