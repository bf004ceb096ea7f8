# Fails when a header Tributary installs includes a GPU vendor's runtime header: the vendor
# calls belong in src/stream_event_<backend>.cpp, compiled into the library, so that a
# user's translation unit never compiles them for Tributary (docs/architecture.md, "A
# backend"). Usage: cmake -DROOT=<source dir> -P check_vendor_headers.cmake
file(GLOB_RECURSE headers "${ROOT}/include/*.hpp" "${ROOT}/include/*.in")
set(pattern "^[ ]*#[ ]*include[ ]*[<\"](cuda|cuda_runtime|cuda_runtime_api|hip/hip_runtime|hip/hip_runtime_api|sycl/sycl)\\.h")
set(bad "")
foreach(f IN LISTS headers)
  file(STRINGS "${f}" lines REGEX "${pattern}")
  foreach(line IN LISTS lines)
    string(APPEND bad "\n  ${f}: ${line}")
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "a public header includes a GPU runtime header:${bad}")
endif()
list(LENGTH headers count)
message(STATUS "vendor headers: none in ${count} public headers")
