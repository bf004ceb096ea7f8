# How Tributary's libraries are built: static by default, shared with BUILD_SHARED_LIBS=ON.
# A shared library carries the project version and an SONAME with MAJOR.MINOR
# (libtributary.so.0.1 -> libtributary.so.0.1.0), the compatibility the package version
# file promises (SameMinorVersion): a release that changes the ABI changes MAJOR.MINOR.
set(TRIBUTARY_SOVERSION "${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}")
if(BUILD_SHARED_LIBS)
  set(TRIBUTARY_PKG_SHARED ON)
else()
  set(TRIBUTARY_PKG_SHARED OFF)
endif()

# Installed programs and libraries find the installed shared libraries beside them, and
# dependencies outside the system folders where they were linked.
if(BUILD_SHARED_LIBS AND TRIBUTARY_TOP_LEVEL AND NOT DEFINED CMAKE_INSTALL_RPATH)
  file(RELATIVE_PATH _tributary_bin_to_lib "${CMAKE_INSTALL_FULL_BINDIR}"
       "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(CMAKE_INSTALL_RPATH "$ORIGIN" "$ORIGIN/${_tributary_bin_to_lib}")
  set(CMAKE_INSTALL_RPATH_USE_LINK_PATH TRUE)
endif()

# The version, SONAME and symbol settings of one of Tributary's libraries.
function(tributary_library_properties target)
  set_target_properties(${target} PROPERTIES
    VERSION "${PROJECT_VERSION}"
    SOVERSION "${TRIBUTARY_SOVERSION}"
    POSITION_INDEPENDENT_CODE ON
    # No <target>_EXPORTS definition: the objects of the static and the shared build are
    # then the same (and cached alike); Tributary exports every symbol.
    DEFINE_SYMBOL "")
endfunction()
