# Adds poisson-gmg-report (report/poisson_gmg_report.cpp) to a Parthenon build: the
# poisson_gmg example's own sources with our main, which prints the final residual as bits
# and the time per solve. scripts/run-parthenon.sh gives it to the stock and the Tributary
# build alike as CMAKE_PROJECT_parthenon_INCLUDE; Parthenon's files are not changed.
cmake_minimum_required(VERSION 3.19)
get_filename_component(_parthenon_report_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

function(_parthenon_report_add)
  if(NOT TARGET poisson-gmg-example)
    message(WARNING "ParthenonReport: no poisson-gmg-example target; no poisson-gmg-report")
    return()
  endif()
  get_target_property(sources poisson-gmg-example SOURCES)
  get_target_property(dir poisson-gmg-example SOURCE_DIR)
  set(kept "")
  foreach(s IN LISTS sources)
    if(NOT s MATCHES "(^|/)main\\.cpp$")
      if(NOT IS_ABSOLUTE "${s}")
        set(s "${dir}/${s}")
      endif()
      list(APPEND kept "${s}")
    endif()
  endforeach()
  add_executable(poisson-gmg-report ${kept} "${_parthenon_report_root}/report/poisson_gmg_report.cpp")
  target_include_directories(poisson-gmg-report PRIVATE "${dir}")
  target_link_libraries(poisson-gmg-report PRIVATE Parthenon::parthenon)
  if(TARGET tributary_parthenon)  # the Tributary build (cmake/TributaryParthenon.cmake)
    target_link_libraries(poisson-gmg-report PRIVATE tributary_parthenon)
  endif()
endfunction()
cmake_language(DEFER CALL _parthenon_report_add)

# And the repository's own application, two-dots.
include("${CMAKE_CURRENT_LIST_DIR}/ParthenonTwoDots.cmake")
