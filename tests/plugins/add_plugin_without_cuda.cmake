# cmake -DSYNK_SOURCE_DIR=... -P add_plugin_without_cuda.cmake
# synk_add_plugin() with CUDA_SOURCES (and no NO_CUDA_SOURCES) in a synk without CUDA: a configure
# error naming the plugin, before any target is made (so script mode reaches it).
include(${SYNK_SOURCE_DIR}/cmake/synk_add_plugin.cmake)
set(SYNK_HAVE_CUDA OFF)
synk_add_plugin(my_model SOURCES my_model.cc CUDA_SOURCES my_kernels.cu)
message(FATAL_ERROR "add_plugin_without_cuda.cmake: synk_add_plugin accepted CUDA_SOURCES")
