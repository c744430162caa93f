// framework/kernels/cuda/cublas_loader: a CUDA build opens cuBLAS and cublasLt on their first call, not at
// start; every function it forwards resolves in the toolkit's libraries; an LD_PRELOAD interposer still
// sees the calls and reaches cuBLAS. Runs without a GPU (the libraries load and answer without one);
// skipped in CPU-only builds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#ifdef LUONG_WITH_CUDA
#include <cublas_v2.h>

#include "framework/kernels/cuda/cublas_loader.h"
#endif

namespace luong::testing {
namespace {

#ifdef LUONG_WITH_CUDA

// Whether a library whose file name contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(name) != std::string::npos) return true;
  return false;
}

TEST(CublasLoader, LibrariesAreOpenedOnFirstUseOnly) {
  // ctest runs each test in its own process; a run of the whole binary (tools/gpu-check) may have used
  // cuBLAS in an earlier test.
  if (cuda::cublas_loaded()) GTEST_SKIP() << "an earlier test in this process used cuBLAS; ctest runs this alone";
  EXPECT_FALSE(mapped("libcublasLt")) << "libcublasLt is mapped before any cuBLAS call (linked, not loaded lazily)";
  EXPECT_FALSE(mapped("libcublas.so"));
  // The first call opens both and reaches the library's own function (no device needed for this one).
  const char* text = cublasGetStatusString(CUBLAS_STATUS_SUCCESS);
  ASSERT_NE(text, nullptr);
  EXPECT_GT(std::string(text).size(), 0u);
  EXPECT_TRUE(cuda::cublas_loaded());
  EXPECT_TRUE(mapped("libcublasLt"));
  EXPECT_TRUE(mapped("libcublas.so"));
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
}

TEST(CublasLoader, EveryForwardedFunctionResolvesUnderItsLibraryName) {
  const std::vector<std::string> names = cuda::resolve_all_cublas_functions();
  EXPECT_EQ(names.size(), 25u);
  auto has = [&](const char* n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  // cublas_v2.h maps these names by macro; the forwarders look up the mapped symbol.
  EXPECT_TRUE(has("cublasCreate_v2"));
  EXPECT_TRUE(has("cublasSgemm_v2_64"));
  EXPECT_TRUE(has("cublasLtMatmul"));
  EXPECT_TRUE(cuda::cublas_loaded());
}

// Run by ctest with tests/cuda/cublas_interposer.cpp preloaded (LUONG_TEST_CUBLAS_INTERPOSER=1 says so):
// luong's call must reach the interposer, and the interposer the real function.
TEST(CublasLoader, AnLdPreloadInterposerSeesTheCallsAndReachesCublas) {
  if (!std::getenv("LUONG_TEST_CUBLAS_INTERPOSER"))
    GTEST_SKIP() << "runs under ctest's cublas_loader_honours_an_interposer, with the interposer preloaded";
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED), "interposed:CUBLAS_STATUS_NOT_SUPPORTED");
}

#else

TEST(CublasLoader, NeedsACudaBuild) { GTEST_SKIP() << "built without CUDA (configure with -DLUONG_CUDA=ON)"; }

#endif

}  // namespace
}  // namespace luong::testing
