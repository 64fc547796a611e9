# CEILING_SANITIZE=ON builds everything with ASan + UBSan; UBSan findings abort so that
# ctest sees them as failures instead of log lines.
if(CEILING_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  # C and C++ only: nvcc does not take -fsanitize (device code is not instrumented).
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_san}>")
  add_link_options(${_san})
endif()
