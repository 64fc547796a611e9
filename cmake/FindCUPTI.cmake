# Imported targets CUPTI::cupti and CUPTI::cudart (CUDA toolkit, default /usr/local/cuda).
# Optional: without them GPU collection reports "not built with CUPTI".
set(_cuda_roots ${CUDAToolkit_ROOT} $ENV{CUDA_HOME} /usr/local/cuda)
find_path(CUPTI_INCLUDE_DIR cupti.h HINTS ${_cuda_roots}
  PATH_SUFFIXES include extras/CUPTI/include targets/x86_64-linux/include NO_DEFAULT_PATH)
find_library(CUPTI_LIBRARY cupti HINTS ${_cuda_roots}
  PATH_SUFFIXES lib64 lib extras/CUPTI/lib64 targets/x86_64-linux/lib NO_DEFAULT_PATH)
if(CUPTI_INCLUDE_DIR AND EXISTS ${CUPTI_INCLUDE_DIR}/cupti_version.h)
  file(STRINGS ${CUPTI_INCLUDE_DIR}/cupti_version.h _cv REGEX "#define CUPTI_API_VERSION[ \t]+[0-9]+")
  string(REGEX MATCH "[0-9]+$" CUPTI_VERSION "${_cv}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CUPTI REQUIRED_VARS CUPTI_LIBRARY CUPTI_INCLUDE_DIR
  VERSION_VAR CUPTI_VERSION)
if(CUPTI_FOUND AND NOT TARGET CUPTI::cupti)
  add_library(CUPTI::cupti UNKNOWN IMPORTED)
  set_target_properties(CUPTI::cupti PROPERTIES IMPORTED_LOCATION ${CUPTI_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${CUPTI_INCLUDE_DIR})
endif()
mark_as_advanced(CUPTI_INCLUDE_DIR CUPTI_LIBRARY)
