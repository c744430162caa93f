// Definitions of the cuBLAS / cublasLt functions luong calls, each forwarding to the library's own symbol,
// opened on first use (see cublas_loader.h for why). The parameter lists are the headers' own: a definition
// that differed from the declaration would not compile (two C functions of one name). Compiled in CUDA
// builds only, like the rest of kernels/cuda.
#ifdef LUONG_WITH_CUDA
#include "framework/kernels/cuda/cublas_loader.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>

#include <atomic>
#include <string>

#include "framework/core/error.h"

// The symbol a cuBLAS name stands for: cublas_v2.h maps several names by macro (cublasCreate is
// cublasCreate_v2, cublasSgemm_64 is cublasSgemm_v2_64), and the library exports the mapped one.
// Two levels, so the argument is expanded before it is quoted.
#define LUONG_STRINGIFY(x) LUONG_STRINGIFY_EXPANDED(x)
#define LUONG_STRINGIFY_EXPANDED(x) #x

namespace luong::cuda {
namespace {

std::atomic<bool> g_loaded{false};

// Opens `soname` the way the dynamic loader would have (LD_LIBRARY_PATH, the executable's run path, the
// system's cache), else from the toolkit this build was compiled against.
void* open_library(const char* soname) {
  if (void* h = dlopen(soname, RTLD_NOW | RTLD_GLOBAL)) return h;
  const std::string first_error = dlerror();
  const std::string fallback = std::string(LUONG_CUDA_LIBRARY_DIR) + "/" + soname;
  if (void* h = dlopen(fallback.c_str(), RTLD_NOW | RTLD_GLOBAL)) return h;
  throw Error("cannot load " + std::string(soname) + ", which luong's CUDA backend needs for its GEMMs (" +
              first_error + "; also tried " + fallback +
              "). Install the CUDA toolkit's cuBLAS or put its directory on LD_LIBRARY_PATH.");
}

// cublasLt first: libcublas needs it, and finds it already loaded by its soname whichever path opened it.
struct Libraries {
  void* lt;
  void* blas;
};

const Libraries& libraries() {
  static const Libraries libs = [] {
    Libraries l{};
    l.lt = open_library("libcublasLt.so." LUONG_STRINGIFY(CUBLAS_VER_MAJOR));
    l.blas = open_library("libcublas.so." LUONG_STRINGIFY(CUBLAS_VER_MAJOR));
    g_loaded = true;
    return l;
  }();
  return libs;
}

enum class Lib { blas, lt };

void* lookup(Lib lib, const char* symbol) {
  const Libraries& libs = libraries();
  void* handle = lib == Lib::lt ? libs.lt : libs.blas;
  dlerror();
  void* p = dlsym(handle, symbol);
  if (!p)
    throw Error(std::string("the loaded ") + (lib == Lib::lt ? "libcublasLt" : "libcublas") + " has no function " +
                symbol + " (a cuBLAS older than the headers luong was built with?)");
  return p;
}

// The function to call for `symbol`. A definition found first in the global scope that is not in this
// program's own image (where the forwarders are) is an LD_PRELOAD interposer (tools/diag/launch_census
// counts GEMM calls that way): it wins, as it would over a linked library. It finds the real function with
// RTLD_NEXT, so the libraries are opened, RTLD_GLOBAL, before it is returned.
void* resolve(Lib lib, const char* symbol) {
  libraries();
  if (void* first = dlsym(RTLD_DEFAULT, symbol)) {
    Dl_info found{}, own{};
    const bool known = dladdr(first, &found) && dladdr(reinterpret_cast<void*>(&lookup), &own);
    if (known && found.dli_fbase != own.dli_fbase) return first;
  }
  return lookup(lib, symbol);
}

// Calls `f` as a function of the arguments' own types, which are the declared parameter types: each
// forwarder passes its parameters unchanged.
template <class Ret, class... Args>
Ret call_as(void* f, Args... args) {
  return reinterpret_cast<Ret (*)(Args...)>(f)(args...);
}

}  // namespace
}  // namespace luong::cuda

// Each body resolves its symbol once (a function-local static, thread-safe) and calls it. The return type
// comes from overload resolution on the real arguments: some names (cublasGemmEx) also have C++ overloads
// in the header, so &fn alone would be ambiguous.
#define LUONG_FORWARD(lib, fn, ...)                                                               \
  static void* const real = ::luong::cuda::resolve(::luong::cuda::Lib::lib, LUONG_STRINGIFY(fn)); \
  return ::luong::cuda::call_as<decltype(fn(__VA_ARGS__))>(real, __VA_ARGS__)

// The list every forwarded function is in, for resolve_all_cublas_functions.
// clang-format off
#define LUONG_CUBLAS_FUNCTIONS(X)             \
  X(blas, cublasCreate)                       \
  X(blas, cublasDestroy)                      \
  X(blas, cublasSetStream)                    \
  X(blas, cublasSetWorkspace)                 \
  X(blas, cublasSetMathMode)                  \
  X(blas, cublasGetStatusString)              \
  X(blas, cublasGetStatusName)                \
  X(blas, cublasGemmEx)                       \
  X(blas, cublasGemmEx_64)                    \
  X(blas, cublasGemmStridedBatchedEx)         \
  X(blas, cublasGemmStridedBatchedEx_64)      \
  X(blas, cublasSgemm)                        \
  X(blas, cublasSgemm_64)                     \
  X(blas, cublasDgemm_64)                     \
  X(blas, cublasSgemmStridedBatched_64)       \
  X(blas, cublasDgemmStridedBatched_64)       \
  X(lt, cublasLtCreate)                       \
  X(lt, cublasLtMatmulDescCreate)             \
  X(lt, cublasLtMatmulDescSetAttribute)       \
  X(lt, cublasLtMatrixLayoutCreate)           \
  X(lt, cublasLtMatmulPreferenceCreate)       \
  X(lt, cublasLtMatmulPreferenceSetAttribute) \
  X(lt, cublasLtMatmulPreferenceDestroy)      \
  X(lt, cublasLtMatmulAlgoGetHeuristic)       \
  X(lt, cublasLtMatmul)
// clang-format on

extern "C" {

cublasStatus_t CUBLASWINAPI cublasCreate(cublasHandle_t* handle) { LUONG_FORWARD(blas, cublasCreate, handle); }

cublasStatus_t CUBLASWINAPI cublasDestroy(cublasHandle_t handle) { LUONG_FORWARD(blas, cublasDestroy, handle); }

cublasStatus_t CUBLASWINAPI cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  LUONG_FORWARD(blas, cublasSetStream, handle, stream);
}

cublasStatus_t CUBLASWINAPI cublasSetWorkspace(cublasHandle_t handle, void* workspace, size_t bytes) {
  LUONG_FORWARD(blas, cublasSetWorkspace, handle, workspace, bytes);
}

cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  LUONG_FORWARD(blas, cublasSetMathMode, handle, mode);
}

const char* CUBLASWINAPI cublasGetStatusString(cublasStatus_t status) {
  LUONG_FORWARD(blas, cublasGetStatusString, status);
}

const char* CUBLASWINAPI cublasGetStatusName(cublasStatus_t status) {
  LUONG_FORWARD(blas, cublasGetStatusName, status);
}

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                         int lda, const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
                                         cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                         cublasGemmAlgo_t algo) {
  LUONG_FORWARD(blas, cublasGemmEx, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                Ctype, ldc, computeType, algo);
}

cublasStatus_t CUBLASWINAPI cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                            int64_t m, int64_t n, int64_t k, const void* alpha, const void* A,
                                            cudaDataType Atype, int64_t lda, const void* B, cudaDataType Btype,
                                            int64_t ldb, const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
                                            cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  LUONG_FORWARD(blas, cublasGemmEx_64, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                Ctype, ldc, computeType, algo);
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const void* alpha,
    const void* A, cudaDataType Atype, int lda, long long int strideA, const void* B, cudaDataType Btype, int ldb,
    long long int strideB, const void* beta, void* C, cudaDataType Ctype, int ldc, long long int strideC,
    int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  LUONG_FORWARD(blas, cublasGemmStridedBatchedEx, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,
                Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
    const void* alpha, const void* A, cudaDataType Atype, int64_t lda, long long int strideA, const void* B,
    cudaDataType Btype, int64_t ldb, long long int strideB, const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
    long long int strideC, int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  LUONG_FORWARD(blas, cublasGemmStridedBatchedEx_64, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,
                Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

cublasStatus_t CUBLASWINAPI cublasSgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                        int m, int n, int k, const float* alpha, const float* A, int lda,
                                        const float* B, int ldb, const float* beta, float* C, int ldc) {
  LUONG_FORWARD(blas, cublasSgemm, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t CUBLASWINAPI cublasSgemm_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                           int64_t m, int64_t n, int64_t k, const float* alpha, const float* A,
                                           int64_t lda, const float* B, int64_t ldb, const float* beta, float* C,
                                           int64_t ldc) {
  LUONG_FORWARD(blas, cublasSgemm_64, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t CUBLASWINAPI cublasDgemm_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                           int64_t m, int64_t n, int64_t k, const double* alpha, const double* A,
                                           int64_t lda, const double* B, int64_t ldb, const double* beta, double* C,
                                           int64_t ldc) {
  LUONG_FORWARD(blas, cublasDgemm_64, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                         cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                         const float* alpha, const float* A, int64_t lda,
                                                         long long int strideA, const float* B, int64_t ldb,
                                                         long long int strideB, const float* beta, float* C,
                                                         int64_t ldc, long long int strideC, int64_t batchCount) {
  LUONG_FORWARD(blas, cublasSgemmStridedBatched_64, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
                strideB, beta, C, ldc, strideC, batchCount);
}

cublasStatus_t CUBLASWINAPI cublasDgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                         cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                         const double* alpha, const double* A, int64_t lda,
                                                         long long int strideA, const double* B, int64_t ldb,
                                                         long long int strideB, const double* beta, double* C,
                                                         int64_t ldc, long long int strideC, int64_t batchCount) {
  LUONG_FORWARD(blas, cublasDgemmStridedBatched_64, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
                strideB, beta, C, ldc, strideC, batchCount);
}

cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t* handle) { LUONG_FORWARD(lt, cublasLtCreate, handle); }

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t computeType,
                                                     cudaDataType_t scaleType) {
  LUONG_FORWARD(lt, cublasLtMatmulDescCreate, desc, computeType, scaleType);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                                           cublasLtMatmulDescAttributes_t attr, const void* buf,
                                                           size_t sizeInBytes) {
  LUONG_FORWARD(lt, cublasLtMatmulDescSetAttribute, desc, attr, buf, sizeInBytes);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                                       uint64_t cols, int64_t ld) {
  LUONG_FORWARD(lt, cublasLtMatrixLayoutCreate, layout, type, rows, cols, ld);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  LUONG_FORWARD(lt, cublasLtMatmulPreferenceCreate, pref);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                                 cublasLtMatmulPreferenceAttributes_t attr,
                                                                 const void* buf, size_t sizeInBytes) {
  LUONG_FORWARD(lt, cublasLtMatmulPreferenceSetAttribute, pref, attr, buf, sizeInBytes);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  LUONG_FORWARD(lt, cublasLtMatmulPreferenceDestroy, pref);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
    cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc, cublasLtMatmulPreference_t preference,
    int requestedAlgoCount, cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount) {
  LUONG_FORWARD(lt, cublasLtMatmulAlgoGetHeuristic, handle, desc, Adesc, Bdesc, Cdesc, Ddesc, preference,
                requestedAlgoCount, heuristicResultsArray, returnAlgoCount);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                                           const void* A, cublasLtMatrixLayout_t Adesc, const void* B,
                                           cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
                                           cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                                           const cublasLtMatmulAlgo_t* algo, void* workspace,
                                           size_t workspaceSizeInBytes, cudaStream_t stream) {
  LUONG_FORWARD(lt, cublasLtMatmul, handle, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace,
                workspaceSizeInBytes, stream);
}

}  // extern "C"

namespace luong::cuda {

bool cublas_loaded() { return g_loaded.load(); }

std::vector<std::string> resolve_all_cublas_functions() {
  std::vector<std::string> names;
#define LUONG_RESOLVE_ONE(lib, fn)       \
  lookup(Lib::lib, LUONG_STRINGIFY(fn)); \
  names.push_back(LUONG_STRINGIFY(fn));
  LUONG_CUBLAS_FUNCTIONS(LUONG_RESOLVE_ONE)
#undef LUONG_RESOLVE_ONE
  return names;
}

}  // namespace luong::cuda

#endif  // LUONG_WITH_CUDA
