# The API reference: `cmake --build <build> --target doc` runs Doxygen over the public
# headers (docs/api/Doxyfile) into <build>/doc/html. scripts/check-docs.sh (a CI stage) runs
# the same configuration and fails on any warning. Without doxygen there is no target.
find_program(TRIBUTARY_DOXYGEN doxygen)
if(TRIBUTARY_DOXYGEN)
  add_custom_target(doc
    COMMAND ${CMAKE_COMMAND} -E make_directory "${PROJECT_BINARY_DIR}/doc"
    COMMAND ${CMAKE_COMMAND} -E env "TRIBUTARY_DOC_OUT=${PROJECT_BINARY_DIR}/doc"
            "${TRIBUTARY_DOXYGEN}" docs/api/Doxyfile
    COMMAND ${CMAKE_COMMAND} -E echo "API reference: ${PROJECT_BINARY_DIR}/doc/html/index.html"
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    COMMENT "Doxygen: the API reference of the public headers"
    VERBATIM)
endif()
