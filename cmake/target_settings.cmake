# The compile settings of synk's own targets: C++20 (unless a target asks for another standard,
# as the SDK's C++17 probes do), no extensions, position-independent code (the static libraries
# go into the cuda backend's module and into plugins), -Wall -Wextra.
# Applied target by target at the end of the top-level CMakeLists, to every target defined in
# synk's source tree, never as directory or global settings: a project that adds synk as a
# subdirectory, or calls synk_add_plugin(), keeps its own settings. What a consumer of a synk
# library must use, it gets as a usage requirement (target_compile_features ... cxx_std_20).

function(synk_target_settings target)
  get_target_property(type ${target} TYPE)
  get_target_property(imported ${target} IMPORTED)
  if(imported OR type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY")
    return()
  endif()
  get_target_property(standard ${target} CXX_STANDARD)
  if(NOT standard)
    set_target_properties(${target} PROPERTIES CXX_STANDARD 20)
  endif()
  set_target_properties(${target} PROPERTIES
    CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF
    POSITION_INDEPENDENT_CODE ON)
  # BEFORE: a target's own -Wno-... still comes after, and wins.
  target_compile_options(${target} BEFORE PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall> $<$<COMPILE_LANGUAGE:CXX>:-Wextra>
    $<$<COMPILE_LANGUAGE:C>:-Wall> $<$<COMPILE_LANGUAGE:C>:-Wextra>)
endfunction()

# Every target defined in `dir` and the folders below it.
function(synk_apply_target_settings dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    synk_target_settings(${target})
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    synk_apply_target_settings(${subdir})
  endforeach()
endfunction()
