# synk_add_plugin(<name> SOURCES <file>... [CUDA_SOURCES <file>...] [NO_CUDA_SOURCES <file>...]
#                 [ALLOW_UNDEFINED])
# A model plugin: the MODULE library lib<name>.so, compiled against the plugin SDK (synk::sdk,
# header-only: a plugin links no synk library) with hidden visibility, exporting the two ABI
# symbols and nothing else (synk_plugin.map): two plugins never bind to each other's symbols and
# no GNU unique symbol pins one in memory. Undefined symbols fail the link (-z defs), so a missing
# function is a link error, not a load error; ALLOW_UNDEFINED is for the loader's own tests.
# CUDA_SOURCES are compiled when synk has its cuda backend (SYNK_HAVE_CUDA), against the shared
# CUDA runtime: one cudart per process, the one synk's cuda backend uses. NO_CUDA_SOURCES take
# their place in a synk without CUDA (say there that the plugin has no GPU code); CUDA_SOURCES
# alone need a synk with CUDA.
# The same file serves synk's own tree and the installed package (find_package(synk)), where the
# plugin lands in the project's library output folder: Session::load takes its path, or its name
# when that folder is on SYNK_PLUGIN_PATH.
function(synk_add_plugin name)
  cmake_parse_arguments(P "ALLOW_UNDEFINED" "" "SOURCES;CUDA_SOURCES;NO_CUDA_SOURCES" ${ARGN})
  if(P_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "synk_add_plugin(${name}): unexpected arguments: ${P_UNPARSED_ARGUMENTS} "
                        "(takes SOURCES, CUDA_SOURCES, NO_CUDA_SOURCES, ALLOW_UNDEFINED)")
  endif()
  if(NOT P_SOURCES)
    message(FATAL_ERROR "synk_add_plugin(${name}): no SOURCES")
  endif()
  set(cuda_sources "")
  if(SYNK_HAVE_CUDA)
    set(cuda_sources ${P_CUDA_SOURCES})
  elseif(P_CUDA_SOURCES AND NOT P_NO_CUDA_SOURCES)
    message(FATAL_ERROR "synk_add_plugin(${name}): CUDA_SOURCES given (${P_CUDA_SOURCES}), but "
                        "this synk was built without CUDA. Build synk with CUDA, or give "
                        "NO_CUDA_SOURCES to compile instead in a synk without it.")
  endif()
  foreach(source IN LISTS cuda_sources)
    get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(source MATCHES "\\.cu$" AND NOT "CUDA" IN_LIST languages)
      message(FATAL_ERROR "synk_add_plugin(${name}): ${source} needs the CUDA language: "
                          "project(... LANGUAGES CXX CUDA) or enable_language(CUDA) first")
    endif()
  endforeach()

  add_library(${name} MODULE ${P_SOURCES})
  if(SYNK_HAVE_CUDA)
    target_sources(${name} PRIVATE ${cuda_sources})
    if(cuda_sources)
      set_target_properties(${name} PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
      target_link_libraries(${name} PRIVATE CUDA::cudart)
    endif()
  else()
    target_sources(${name} PRIVATE ${P_NO_CUDA_SOURCES})
  endif()
  target_link_libraries(${name} PRIVATE synk::sdk)
  set_target_properties(${name} PROPERTIES
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  # The export map: plugins/abi/ in synk's tree, beside this file when installed.
  if(DEFINED SYNK_PLUGIN_EXPORT_MAP)
    set(exports ${SYNK_PLUGIN_EXPORT_MAP})
  else()
    set(exports ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/synk_plugin.map)
  endif()
  target_link_options(${name} PRIVATE LINKER:--version-script=${exports})
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS ${exports})
  if(NOT P_ALLOW_UNDEFINED)
    target_link_options(${name} PRIVATE LINKER:-z,defs)
  endif()
endfunction()
