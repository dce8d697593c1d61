# _synk_clear_link_path(<root> <link>): makes <link>, a path below the include root <root>, free
# for a new link without reaching through an old one. A build folder configured before a folder
# was split into sub-folders may hold, on the way to <link>, a link to a whole source folder
# (synk/collectives/cuda -> the sources): creating the new link through it would write into the
# source tree (a folder link fails on the real folder there; a header's link replaces the header
# with a link to itself). So a link among the folders above <link> is removed (the link only,
# never what it points to), and so is a real folder at <link> itself (one that held per-file
# links before the path became a folder link); file(CREATE_LINK) then replaces an old link.
function(_synk_clear_link_path root link)
  file(RELATIVE_PATH relative ${root} ${link})
  string(REPLACE "/" ";" parts "${relative}")
  list(POP_BACK parts)
  set(path ${root})
  foreach(part IN LISTS parts)
    set(path ${path}/${part})
    if(IS_SYMLINK ${path})
      file(REMOVE ${path})
    endif()
  endforeach()
  if(IS_DIRECTORY ${link} AND NOT IS_SYMLINK ${link})
    file(REMOVE_RECURSE ${link})
  endif()
endfunction()

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
    _synk_clear_link_path(${root} ${link})
    get_filename_component(parent ${link} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${path} ${link} SYMBOLIC)
  endforeach()
  set_property(TARGET ${target} APPEND PROPERTY SYNK_HEADER_PATHS ${ARGN})
  target_include_directories(${target} ${scope}
    $<BUILD_INTERFACE:${root}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endfunction()

# synk_target_flat_headers(<target> <INTERFACE|PUBLIC|PRIVATE> <dest> <header>...)
# Makes each <header> of the source tree includable as "synk/<dest>/<its name>", wherever it sits:
# the public headers a library keeps in sub-folders by concern (core/values/array.h) but that
# programs include, and the package installs, at one flat path (synk/core/array.h), so that a
# header's move between folders changes no program (core/README.md, "Rooms and files"). The links
# live in an include root of the target's own, build/include/<target>_flat/synk/<dest>/.
# Installed (install.cmake) under <prefix>/include/synk/<dest>/; the folders they come from are
# then left out of the target's directory install, so none is installed twice.
function(synk_target_flat_headers target scope dest)
  set(root ${PROJECT_BINARY_DIR}/include/${target}_flat)
  file(MAKE_DIRECTORY ${root}/synk/${dest})
  set(folders "")
  foreach(header IN LISTS ARGN)
    if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${header})
      message(FATAL_ERROR
              "synk_target_flat_headers(${target}): no ${header} in ${PROJECT_SOURCE_DIR}")
    endif()
    get_filename_component(name ${header} NAME)
    get_filename_component(folder ${header} DIRECTORY)
    if(EXISTS ${PROJECT_SOURCE_DIR}/${dest}/${name})
      message(FATAL_ERROR "synk_target_flat_headers(${target}): ${header} and ${dest}/${name} "
                          "would both be synk/${dest}/${name}")
    endif()
    _synk_clear_link_path(${root} ${root}/synk/${dest}/${name})
    file(MAKE_DIRECTORY ${root}/synk/${dest})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${header} ${root}/synk/${dest}/${name} SYMBOLIC)
    list(APPEND folders ${folder})
  endforeach()
  list(REMOVE_DUPLICATES folders)
  set_property(TARGET ${target} APPEND PROPERTY SYNK_FLAT_HEADERS ${ARGN})
  set_property(TARGET ${target} APPEND PROPERTY SYNK_FLAT_HEADER_DEST ${dest})
  set_property(TARGET ${target} APPEND PROPERTY SYNK_FLAT_HEADER_FOLDERS ${folders})
  target_include_directories(${target} ${scope} $<BUILD_INTERFACE:${root}>)
endfunction()
