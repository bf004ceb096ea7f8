# Fails when library code can block on the device anywhere but the documented points.
# Every line of include/ and src/ that fences, synchronises or copies between memory spaces
# without an execution-space instance must carry the marker "tributary-fence-ok" with its
# reason; docs/device.md lists them. Usage: cmake -DROOT=<source dir> -P check_fences.cmake
file(GLOB_RECURSE sources "${ROOT}/include/*.hpp" "${ROOT}/include/*.in" "${ROOT}/src/*.cpp"
     "${ROOT}/src/*.hpp")
set(pattern "(\\.fence\\(|Kokkos::fence|deep_copy\\(|create_mirror_view_and_copy|Synchronize\\(|Kokkos::resize\\(|Kokkos::realloc\\()")
set(bad "")
set(allowed 0)
foreach(f IN LISTS sources)
  file(STRINGS "${f}" lines REGEX "${pattern}")
  foreach(line IN LISTS lines)
    if(line MATCHES "tributary-fence-ok")
      math(EXPR allowed "${allowed} + 1")
    elseif(NOT line MATCHES "^[ ]*//")
      string(APPEND bad "\n  ${f}: ${line}")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "device synchronisation outside the documented points:${bad}")
endif()
message(STATUS "fence points: ${allowed} marked, none unmarked")
