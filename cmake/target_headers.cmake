# synk_target_headers(<target> <INTERFACE|PUBLIC|PRIVATE> <path>...)
# Makes each <path> of the source tree (a folder such as core or plugins/sdk, or one header)
# includable as "synk/<path>..." by <target> and, unless PRIVATE, by whatever links it, and by
# nothing else (a path in the top-level synk/ folder keeps its name: "synk/synk.h"); every target
# has an include root of its own,
# build/include/<target>/synk/<path> being a link to the source. A target that does not link
# synk_harness cannot include a harness header, so the layering is the build's, not a convention.
# Installed, the headers of every exported target are under <prefix>/include/synk/ (install.cmake
# reads the paths back from the target's SYNK_HEADER_PATHS).
function(synk_target_headers target scope)
  set(root ${PROJECT_BINARY_DIR}/include/${target})
  foreach(path IN LISTS ARGN)
    if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${path})
      message(FATAL_ERROR "synk_target_headers(${target}): no ${path} in ${PROJECT_SOURCE_DIR}")
    endif()
    # The top-level synk/ folder (the fork() entry point) is included as "synk/synk.h" itself.
    if(path MATCHES "^synk/")
      set(link ${root}/${path})
    else()
      set(link ${root}/synk/${path})
    endif()
    get_filename_component(parent ${link} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${path} ${link} SYMBOLIC)
  endforeach()
  set_property(TARGET ${target} APPEND PROPERTY SYNK_HEADER_PATHS ${ARGN})
  target_include_directories(${target} ${scope}
    $<BUILD_INTERFACE:${root}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endfunction()
