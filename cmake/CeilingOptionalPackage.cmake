# ceiling_find_optional(NAME [find_package arguments...])
#
# find_package(NAME CONFIG QUIET ...) for an optional library, except that a config which
# fails to load degrades to "not found" instead of stopping the configure. A package's own
# config may call find_package(... REQUIRED) on something it merely recommends (Debian's
# libdnnl-dev needs OpenCL headers it does not depend on), and CMake has no way to catch
# that error. So the config is first loaded in a child configure (cmake/probe); only when it
# loads there is it loaded here. Sets NAME_FOUND and, when not found, CEILING_NAME_WHY: the
# first error line the config printed (or "not installed").
function(ceiling_find_optional name)
  set(probe_dir ${CMAKE_BINARY_DIR}/probe/${name})
  file(REMOVE_RECURSE ${probe_dir})
  string(REPLACE ";" "\\;" args "${ARGN}")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${CMAKE_SOURCE_DIR}/cmake/probe -B ${probe_dir}
            -G ${CMAKE_GENERATOR}
            -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER} -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
            -DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH}
            -DPROBE_PACKAGE=${name} "-DPROBE_ARGS=${args}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(TOUPPER ${name} upper)
  if(NOT rc EQUAL 0)
    set(why "not installed")
    if(err MATCHES "Could NOT find ([^\n]*)")
      set(why "its CMake config failed to load: could not find ${CMAKE_MATCH_1}")
    elseif(NOT err MATCHES "Could not find a package configuration file"
           AND err MATCHES "CMake Error[^\n]*\n *([^\n]+)")
      set(why "its CMake config failed to load: ${CMAKE_MATCH_1}")
    endif()
    set(${name}_FOUND FALSE PARENT_SCOPE)
    set(CEILING_${upper}_WHY "${why}" PARENT_SCOPE)
    return()
  endif()
  find_package(${name} CONFIG QUIET ${ARGN})
  # find_package sets its variables in this function's scope: hand the useful ones up.
  foreach(var FOUND VERSION INCLUDE_DIRS LIBRARIES)
    set(${name}_${var} "${${name}_${var}}" PARENT_SCOPE)
  endforeach()
  if(NOT ${name}_FOUND)
    set(CEILING_${upper}_WHY "found by the probe but not here" PARENT_SCOPE)
  endif()
endfunction()
