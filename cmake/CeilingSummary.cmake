# One line per optional part: what was found and what was left out, and why.
function(_ceiling_part name found detail)
  if(${found})
    message(STATUS "ceiling: ${name}: found ${detail}")
  else()
    message(STATUS "ceiling: ${name}: left out (${detail})")
  endif()
endfunction()
_ceiling_part("PAPI" PAPI_FOUND "${PAPI_VERSION}")
_ceiling_part("libpfm4" Pfm_FOUND "${Pfm_LIBRARY}")
# --- GPU (issue 7) ---
_ceiling_part("CUDA" CEILING_HAVE_CUDA "${CEILING_CUDA_DETAIL}")
# --- end GPU ---
if(CEILING_WITH_CUDA)
  _ceiling_part("CUPTI" CUPTI_FOUND "${CUPTI_VERSION}")
else()
  message(STATUS "ceiling: CUPTI: left out (CEILING_WITH_CUDA=OFF)")
endif()
# --- reference kernels' libraries (issue 4; found in kernels/CMakeLists.txt) ---
_ceiling_part("OpenBLAS" CEILING_HAVE_OPENBLAS "${CEILING_OPENBLAS_DETAIL}")
_ceiling_part("oneDNN" CEILING_HAVE_DNNL "${CEILING_DNNL_DETAIL}")
_ceiling_part("OpenCV" CEILING_HAVE_OPENCV "${CEILING_OPENCV_DETAIL}")
# --- end reference kernels ---
if(CEILING_SANITIZE)
  message(STATUS "ceiling: sanitizers: ASan + UBSan")
endif()
