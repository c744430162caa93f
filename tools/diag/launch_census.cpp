// LD_PRELOAD census of what the host spends on the CUDA API: counts and host time of every kernel launch
// (the __cudaLaunchKernel that nvcc's launch stubs call), of each cuBLAS GEMM entry point luong uses, and
// of the async copies and memsets, plus the busiest launch sites (module+offset; map them with addr2line on
// the unstripped build). Run a step bench twice with different step counts and difference the totals to get
// per-step figures (tools/gpu-check's host section does). The CUDA headers declare every function defined
// here, so a signature that drifted from the library's would not compile.
//   c++ -O2 -shared -fPIC -I/usr/local/cuda/include -o launch_census.so tools/diag/launch_census.cpp -ldl
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <ctime>

namespace {

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Counter {
  const char* name;
  unsigned long calls = 0;
  double seconds = 0;
};

enum Api { kLaunch, kGemmEx, kGemmBatchedEx, kSgemm, kSgemmBatched, kMemcpyAsync, kMemsetAsync, kApis };
Counter counters[kApis] = {{"kernel launches"},
                           {"cublasGemmEx_64"},
                           {"cublasGemmStridedBatchedEx_64"},
                           {"cublasSgemm_v2_64"},
                           {"cublasSgemmStridedBatched_64"},
                           {"cudaMemcpyAsync"},
                           {"cudaMemsetAsync"}};

constexpr int kSites = 512;
struct Site {
  void* caller = nullptr;
  unsigned long calls = 0;
} sites[kSites];

void count_site(void* caller) {
  for (auto& s : sites) {
    if (s.caller == caller) return void(++s.calls);
    if (!s.caller) {
      s.caller = caller, s.calls = 1;
      return;
    }
  }
}

template <class Fn>
Fn real(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// Times one call of the real function and adds it to counter `api`.
template <class Fn, class... Args>
auto timed(Api api, Fn fn, Args... args) {
  const double t0 = now();
  auto r = fn(args...);
  counters[api].seconds += now() - t0;
  ++counters[api].calls;
  return r;
}

__attribute__((destructor)) void report() {
  for (const auto& c : counters)
    std::fprintf(stderr, "launch_census: %-30s %10lu calls %10.1f ms host\n", c.name, c.calls, c.seconds * 1e3);
  for (int printed = 0; printed < 25; ++printed) {
    Site* best = nullptr;
    for (auto& s : sites)
      if (s.calls && (!best || s.calls > best->calls)) best = &s;
    if (!best) break;
    Dl_info info;
    if (dladdr(best->caller, &info) && info.dli_fname)
      std::fprintf(stderr, "launch_census: site %10lu launches  %s+0x%lx\n", best->calls, info.dli_fname,
                   static_cast<unsigned long>(static_cast<char*>(best->caller) - static_cast<char*>(info.dli_fbase)));
    best->calls = 0;
  }
}

}  // namespace

extern "C" {

cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                         cudaStream_t stream) {
  static auto fn = real<decltype(&__cudaLaunchKernel)>("__cudaLaunchKernel");
  count_site(__builtin_return_address(0));
  return timed(kLaunch, fn, kernel, grid, block, args, shared, stream);
}

cublasStatus_t CUBLASWINAPI cublasGemmEx_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                            int64_t n, int64_t k, const void* alpha, const void* A, cudaDataType Atype,
                                            int64_t lda, const void* B, cudaDataType Btype, int64_t ldb,
                                            const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
                                            cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  static auto fn = real<decltype(&cublasGemmEx_64)>("cublasGemmEx_64");
  return timed(kGemmEx, fn, h, ta, tb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, compute,
               algo);
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx_64(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k, const void* alpha,
    const void* A, cudaDataType Atype, int64_t lda, long long int sA, const void* B, cudaDataType Btype, int64_t ldb,
    long long int sB, const void* beta, void* C, cudaDataType Ctype, int64_t ldc, long long int sC, int64_t batch,
    cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  static auto fn = real<decltype(&cublasGemmStridedBatchedEx_64)>("cublasGemmStridedBatchedEx_64");
  return timed(kGemmBatchedEx, fn, h, ta, tb, m, n, k, alpha, A, Atype, lda, sA, B, Btype, ldb, sB, beta, C, Ctype, ldc,
               sC, batch, compute, algo);
}

cublasStatus_t CUBLASWINAPI cublasSgemm_v2_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                              int64_t n, int64_t k, const float* alpha, const float* A, int64_t lda,
                                              const float* B, int64_t ldb, const float* beta, float* C, int64_t ldc) {
  static auto fn = real<decltype(&cublasSgemm_v2_64)>("cublasSgemm_v2_64");
  return timed(kSgemm, fn, h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                                         int64_t m, int64_t n, int64_t k, const float* alpha,
                                                         const float* A, int64_t lda, long long int sA, const float* B,
                                                         int64_t ldb, long long int sB, const float* beta, float* C,
                                                         int64_t ldc, long long int sC, int64_t batch) {
  static auto fn = real<decltype(&cublasSgemmStridedBatched_64)>("cublasSgemmStridedBatched_64");
  return timed(kSgemmBatched, fn, h, ta, tb, m, n, k, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC, batch);
}

cudaError_t CUDARTAPI cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                      cudaStream_t stream) {
  static auto fn = real<decltype(&cudaMemcpyAsync)>("cudaMemcpyAsync");
  return timed(kMemcpyAsync, fn, dst, src, count, kind, stream);
}

cudaError_t CUDARTAPI cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream) {
  static auto fn = real<decltype(&cudaMemsetAsync)>("cudaMemsetAsync");
  return timed(kMemsetAsync, fn, ptr, value, count, stream);
}

}  // extern "C"
