# cmake --install: the public headers under include/synk/ (not core's internal rooms), the
# static libraries and the CMake package (synkConfig.cmake, its version file, the exported
# targets, synk_add_plugin) under lib/cmake/synk/; the plugins and the cuda backend go to
# lib/synk/ (SYNK_INSTALL_PLUGIN_DIR), by the install() beside each. A build without CUDA
# installs the same, less the cuda backend.
include(CMakePackageConfigHelpers)

set(synk_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/synk)
# Exported as synk::<name>; the headers each exposes (synk_target_headers) are installed with it.
set(synk_exported
  synk_core core
  synk_cluster cluster
  synk_collectives collectives
  synk_plugin_abi abi
  synk_plugin_sdk sdk
  synk_plugin_compute compute
  synk_shm shm
  synk_plugins plugins
  synk synk)
# With Open MPI, synk links the node bridge (cluster/): exported for it, with MPI found by the
# package (synkConfig.cmake).
if(TARGET synk_cluster_mpi)
  list(APPEND synk_exported synk_cluster_mpi cluster_mpi)
endif()
set(synk_exported_targets "")
while(synk_exported)
  list(POP_FRONT synk_exported target name)
  list(APPEND synk_exported_targets ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  get_target_property(paths ${target} SYNK_HEADER_PATHS)
  if(NOT paths)  # a library whose headers another target installs (cluster_mpi: cluster's)
    set(paths "")
  endif()
  foreach(path IN LISTS paths)
    set(dest ${CMAKE_INSTALL_INCLUDEDIR}/synk/${path})
    if(path MATCHES "^synk/")  # the top-level synk/ folder: synk/synk.h (target_headers.cmake)
      set(dest ${CMAKE_INSTALL_INCLUDEDIR}/${path})
    endif()
    get_filename_component(parent ${dest} DIRECTORY)
    if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/${path})
      # collectives/cuda/ is the cuda backend's inside, which programs reach through its module;
      # a target's internal folders (SYNK_INTERNAL_HEADER_PATHS: core's rooms, core/README.md)
      # are includable in this tree only.
      # The folders of its flat headers (synk_target_flat_headers) are installed below, flat.
      get_target_property(internal ${target} SYNK_INTERNAL_HEADER_PATHS)
      get_target_property(flat_folders ${target} SYNK_FLAT_HEADER_FOLDERS)
      set(excluded "")
      foreach(inside IN LISTS internal flat_folders)
        if(inside)
          list(APPEND excluded PATTERN "${inside}" EXCLUDE)
        endif()
      endforeach()
      install(DIRECTORY ${PROJECT_SOURCE_DIR}/${path} DESTINATION ${parent}
              FILES_MATCHING PATTERN "*.h" PATTERN "*.cuh"
              PATTERN "collectives/cuda" EXCLUDE ${excluded})
    else()
      install(FILES ${PROJECT_SOURCE_DIR}/${path} DESTINATION ${parent})
    endif()
  endforeach()
  # Headers kept in sub-folders but included, and installed, at one flat path.
  get_target_property(flat ${target} SYNK_FLAT_HEADERS)
  get_target_property(flat_dest ${target} SYNK_FLAT_HEADER_DEST)
  if(flat)
    foreach(header IN LISTS flat)
      install(FILES ${PROJECT_SOURCE_DIR}/${header}
              DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/synk/${flat_dest})
    endforeach()
  endif()
endwhile()

install(TARGETS ${synk_exported_targets} EXPORT synkTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT synkTargets NAMESPACE synk:: DESTINATION ${synk_package_dir})

set(SYNK_PACKAGE_PLUGIN_DIR ${CMAKE_INSTALL_LIBDIR}/synk)
set(SYNK_PACKAGE_CUDA_ARCHITECTURES "")
if(SYNK_HAVE_CUDA)
  set(SYNK_PACKAGE_CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/synkConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/synkConfig.cmake
  INSTALL_DESTINATION ${synk_package_dir}
  PATH_VARS SYNK_PACKAGE_PLUGIN_DIR)
# 0.x: a minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/synkConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/package/synkConfig.cmake
  ${PROJECT_BINARY_DIR}/package/synkConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/synk_add_plugin.cmake
  ${SYNK_PLUGIN_EXPORT_MAP}
  DESTINATION ${synk_package_dir})
