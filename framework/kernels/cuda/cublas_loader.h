// cuBLAS and cublasLt are loaded on their first call, not at program start (cublas_loader.cpp).
//
// Why: the dynamic loader maps libcublasLt as a process starts, and its static initialisers alone take
// about 150 MB of resident memory (84 MB of heap they allocate, 62 MB of the library's pages touched by
// relocation; measured by dlopen-ing it from python3 and reading /proc/self/smaps). A CUDA build runs CPU
// jobs too (the same binary on a cluster's CPU nodes, `luong eval` of a checkpoint, the CPU tests), and
// those never call cuBLAS: they should not pay for it. luong therefore does not link libcublas or
// libcublasLt; cublas_loader.cpp defines each cuBLAS function luong calls, with the signature of the
// library's own header, and forwards it to the library's symbol, opened and looked up on first use.
#pragma once
#include <string>
#include <vector>

namespace luong::cuda {

// Whether libcublas / libcublasLt have been opened in this process (by a first call, or by
// resolve_all_cublas_functions).
bool cublas_loaded();

// Opens both libraries and looks up every function luong forwards, returning their names; throws
// luong::Error naming the library or symbol that is missing. For tests and diagnostics.
std::vector<std::string> resolve_all_cublas_functions();

}  // namespace luong::cuda
