# Imported target Pfm::pfm for libpfm4 (Debian libpfm4-dev): encodes native PMU event
# names into perf_event attributes. Optional.
find_path(Pfm_INCLUDE_DIR perfmon/pfmlib_perf_event.h)
find_library(Pfm_LIBRARY pfm)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Pfm REQUIRED_VARS Pfm_LIBRARY Pfm_INCLUDE_DIR)
if(Pfm_FOUND AND NOT TARGET Pfm::pfm)
  add_library(Pfm::pfm UNKNOWN IMPORTED)
  set_target_properties(Pfm::pfm PROPERTIES IMPORTED_LOCATION ${Pfm_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${Pfm_INCLUDE_DIR})
endif()
mark_as_advanced(Pfm_INCLUDE_DIR Pfm_LIBRARY)
