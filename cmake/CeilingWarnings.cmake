# Warnings for our own targets only (never for imported ones).
add_library(ceiling_warnings INTERFACE)
target_compile_options(ceiling_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual -Wnull-dereference -Wformat=2>)
