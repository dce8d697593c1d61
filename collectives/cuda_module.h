#pragma once
// The cuda backend lives in its own shared library, libsynk_cuda_backend.so, which the default
// registry loads (dlopen) only when a program asks for backend "cuda": a CPU-only program links
// and runs without CUDA's libraries (libcudart, libcublas, libnccl), which only that library
// needs. Both sides are built from one synk build: the library carries the build's stamp and the
// loader refuses another's (its C++ objects must have the same layout as the program's).
//
// The library is found like a plugin, by name, on the plugin search path
// (core/plugin_search.h). Exported, extern "C":
//   const char* synk_cuda_backend_build(void);          the build stamp (SYNK_BUILD_STAMP)
//   synk::BackendFactory* synk_cuda_backend_factory_v1(void);   a new factory; the caller owns it

#define SYNK_CUDA_BACKEND_LIBRARY "synk_cuda_backend"
#define SYNK_CUDA_BACKEND_BUILD_SYMBOL "synk_cuda_backend_build"
#define SYNK_CUDA_BACKEND_FACTORY_SYMBOL "synk_cuda_backend_factory_v1"
