# Imported target PAPI::papi (Debian libpapi-dev). Optional: without it the PAPI
# collector reports "not built with PAPI".
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_PAPI QUIET papi)
endif()
find_path(PAPI_INCLUDE_DIR papi.h HINTS ${PC_PAPI_INCLUDE_DIRS})
find_library(PAPI_LIBRARY papi HINTS ${PC_PAPI_LIBRARY_DIRS})
set(PAPI_VERSION ${PC_PAPI_VERSION})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PAPI REQUIRED_VARS PAPI_LIBRARY PAPI_INCLUDE_DIR
  VERSION_VAR PAPI_VERSION)
if(PAPI_FOUND AND NOT TARGET PAPI::papi)
  add_library(PAPI::papi UNKNOWN IMPORTED)
  set_target_properties(PAPI::papi PROPERTIES IMPORTED_LOCATION ${PAPI_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${PAPI_INCLUDE_DIR})
endif()
mark_as_advanced(PAPI_INCLUDE_DIR PAPI_LIBRARY)
