# Imported target Hwloc::hwloc from pkg-config (Debian libhwloc-dev).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_HWLOC QUIET hwloc)
endif()
find_path(Hwloc_INCLUDE_DIR hwloc.h HINTS ${PC_HWLOC_INCLUDE_DIRS})
find_library(Hwloc_LIBRARY hwloc HINTS ${PC_HWLOC_LIBRARY_DIRS})
set(Hwloc_VERSION ${PC_HWLOC_VERSION})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Hwloc REQUIRED_VARS Hwloc_LIBRARY Hwloc_INCLUDE_DIR
  VERSION_VAR Hwloc_VERSION)
if(Hwloc_FOUND AND NOT TARGET Hwloc::hwloc)
  add_library(Hwloc::hwloc UNKNOWN IMPORTED)
  set_target_properties(Hwloc::hwloc PROPERTIES IMPORTED_LOCATION ${Hwloc_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${Hwloc_INCLUDE_DIR})
endif()
mark_as_advanced(Hwloc_INCLUDE_DIR Hwloc_LIBRARY)
