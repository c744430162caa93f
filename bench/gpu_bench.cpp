// GPU benchmark: GEMM throughput on the shapes of a Luong NMT step (4-layer LSTM, hidden 1000, batch 128,
// 50 steps, vocabulary 50k) through the engine (luong::cuda::gemm / gemm_bf16) and through cuBLAS directly,
// in float32, TF32 and bf16; and the fused LSTM cell's bandwidth. Prints tables; asserts nothing.
// "bf16 f32in" is what training with train.precision=bf16 runs: luong::cuda::gemm<float> under
// GemmPrecision::bf16, float32 operands converted to bf16 scratch on every call (conversion included).
// Training tokens/s and peak memory per precision come from luong_step_bench (tools/gpu-check runs both).
// Usage: luong_gpu_bench [--quick]   (--quick: fewer repetitions, for tools/gpu-check)
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "framework/core/cuda_info.h"
#include "framework/core/precision.h"
#include "framework/kernels/cuda/check.h"
#include "framework/kernels/cuda/device.h"
#include "framework/kernels/cuda/kernels.h"
#include "framework/kernels/cuda/runtime.h"
#include "framework/tensor/tensor.h"

namespace {

using luong::Device;
using luong::DType;
using luong::Tensor;

int g_reps = 20;

// A device tensor of n float32 values in [-1, 1) (xorshift on the host: fast, and the values only need
// to be non-trivial; all-zero operands run measurably faster on tensor cores).
Tensor random_device_floats(int64_t n, uint32_t seed) {
  std::vector<float> host(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 1u;
  for (auto& x : host) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    x = static_cast<float>(s >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  Tensor t = Tensor::empty({n}, DType::f32, Device::cuda(0));
  LUONG_CUDA_CHECK(cudaMemcpy(t.raw(), host.data(), sizeof(float) * host.size(), cudaMemcpyHostToDevice));
  return t;
}

Tensor to_bf16(const Tensor& f) {
  Tensor t = Tensor::empty(f.shape(), DType::bf16, Device::cuda(0));
  luong::cuda::float_to_bf16(f.numel(), f.data<float>(), static_cast<uint16_t*>(t.raw()));
  return t;
}

// Mean milliseconds of fn over g_reps runs after 3 warm-ups, timed with events on the engine's stream.
double time_ms(const std::function<void()>& fn) {
  cudaStream_t s = luong::cuda::stream();
  for (int i = 0; i < 3; ++i) fn();
  cudaEvent_t start, stop;
  LUONG_CUDA_CHECK(cudaEventCreate(&start));
  LUONG_CUDA_CHECK(cudaEventCreate(&stop));
  LUONG_CUDA_CHECK(cudaEventRecord(start, s));
  for (int i = 0; i < g_reps; ++i) fn();
  LUONG_CUDA_CHECK(cudaEventRecord(stop, s));
  LUONG_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  LUONG_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  LUONG_CUDA_CHECK(cudaEventDestroy(start));
  LUONG_CUDA_CHECK(cudaEventDestroy(stop));
  return ms / g_reps;
}

struct GemmShape {
  const char* what;
  bool trans_a;
  int64_t m, n, k;
};

// Direct cuBLAS calls on the engine's stream (row-major as C^T = B^T A^T, as the engine does).
struct DirectBlas {
  cublasHandle_t h = nullptr;
  DirectBlas() {
    LUONG_CUBLAS_CHECK(cublasCreate(&h));
    LUONG_CUBLAS_CHECK(cublasSetStream(h, luong::cuda::stream()));
  }
  ~DirectBlas() { cublasDestroy(h); }
  void gemm(const GemmShape& g, const void* a, const void* b, void* c, cudaDataType_t in, cudaDataType_t out,
            cublasComputeType_t compute) {
    const float alpha = 1.f, beta = 0.f;
    LUONG_CUBLAS_CHECK(cublasGemmEx_64(h, CUBLAS_OP_N, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, g.n, g.m, g.k, &alpha,
                                       b, in, g.n, a, in, g.trans_a ? g.m : g.k, &beta, c, out, g.n, compute,
                                       CUBLAS_GEMM_DEFAULT));
  }
};

void gemm_table() {
  const std::vector<GemmShape> shapes = {
      {"recurrent h U (one step)", false, 128, 4000, 1000},
      {"input proj x W (50 steps)", false, 6400, 4000, 1000},
      {"weight grad x^T dz", true, 1000, 4000, 6400},
      {"output logits (50k vocab)", false, 6400, 50000, 1000},
  };
  std::printf("\nGEMM throughput, TFLOP/s (row-major C = op(A) B, beta = 0; engine = luong::cuda)\n");
  std::printf("%-28s %-20s %9s %9s %9s %9s %9s %9s %11s\n", "shape", "m x n x k", "f32 eng", "f32 blas",
              "tf32 eng", "tf32 blas", "bf16 eng", "bf16 blas", "bf16 f32in");
  DirectBlas direct;
  for (const GemmShape& g : shapes) {
    Tensor a = random_device_floats(g.m * g.k, 1), b = random_device_floats(g.k * g.n, 2);
    Tensor c = Tensor::empty({g.m * g.n}, DType::f32, Device::cuda(0));
    Tensor a16 = to_bf16(a), b16 = to_bf16(b);
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* pc = c.data<float>();
    const auto* pa16 = static_cast<const uint16_t*>(a16.raw());
    const auto* pb16 = static_cast<const uint16_t*>(b16.raw());
    const double flop = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
    auto tflops = [&](double ms) { return flop / (ms * 1e-3) / 1e12; };
    auto engine_f32 = [&] { luong::cuda::gemm<float>(g.trans_a, false, g.m, g.n, g.k, 1.f, pa, pb, 0.f, pc); };
    const double f32_eng = tflops(time_ms(engine_f32));
    const double f32_blas =
        tflops(time_ms([&] { direct.gemm(g, pa, pb, pc, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F); }));
    double tf32_eng = 0, bf16_f32in = 0;
    {
      const luong::GemmPrecisionGuard tf32(luong::GemmPrecision::tf32);
      tf32_eng = tflops(time_ms(engine_f32));
    }
    {
      const luong::GemmPrecisionGuard bf16(luong::GemmPrecision::bf16);
      bf16_f32in = tflops(time_ms(engine_f32));
    }
    const double tf32_blas = tflops(
        time_ms([&] { direct.gemm(g, pa, pb, pc, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32); }));
    const double bf16_eng = tflops(
        time_ms([&] { luong::cuda::gemm_bf16(g.trans_a, false, g.m, g.n, g.k, 1.f, pa16, pb16, 0.f, pc); }));
    const double bf16_blas = tflops(
        time_ms([&] { direct.gemm(g, pa16, pb16, pc, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F); }));
    const std::string dims = std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k);
    std::printf("%-28s %-20s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %11.1f\n", g.what, dims.c_str(), f32_eng, f32_blas,
                tf32_eng, tf32_blas, bf16_eng, bf16_blas, bf16_f32in);
  }
}

void lstm_table() {
  std::printf("\nFused LSTM cell (float32), effective bandwidth counting each value read or written once\n");
  std::printf("%-14s %-14s %12s %10s %12s %10s\n", "batch", "hidden", "fwd us", "fwd GB/s", "bwd us", "bwd GB/s");
  for (auto [B, H] : {std::pair<int64_t, int64_t>{128, 1000}, {4096, 4096}}) {
    const int64_t n = B * H;
    Tensor z = random_device_floats(4 * n, 3), c_prev = random_device_floats(n, 4);
    Tensor gates = Tensor::empty({4 * n}, DType::f32, Device::cuda(0)), c = random_device_floats(n, 5);
    Tensor h = random_device_floats(n, 7), dh = random_device_floats(n, 8);
    Tensor dc = random_device_floats(n, 9), dz = Tensor::empty({4 * n}, DType::f32, Device::cuda(0));
    Tensor dc_prev = random_device_floats(n, 10);
    const double fwd = time_ms([&] {
      luong::cuda::lstm_cell_forward<float>(B, H, z.data<float>(), c_prev.data<float>(), gates.data<float>(),
                                            c.data<float>(), h.data<float>());
    });
    const double bwd = time_ms([&] {
      luong::cuda::lstm_cell_backward<float>(B, H, gates.data<float>(), c_prev.data<float>(), c.data<float>(),
                                             dh.data<float>(), dc.data<float>(), dz.data<float>(),
                                             dc_prev.data<float>());
    });
    // forward: read z (4) + c_prev, write gates (4) + c + h = 11 values per element;
    // backward: read gates (4) + c_prev + c + dh + dc + dc_prev, write dz (4) + dc_prev = 14.
    const double bytes = static_cast<double>(n) * sizeof(float);
    std::printf("%-14lld %-14lld %12.1f %10.0f %12.1f %10.0f\n", static_cast<long long>(B), static_cast<long long>(H),
                fwd * 1e3, 11 * bytes / (fwd * 1e-3) / 1e9, bwd * 1e3, 14 * bytes / (bwd * 1e-3) / 1e9);
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--quick") == 0) g_reps = 5;
  if (!luong::cuda_available()) {
    std::printf("luong_gpu_bench: no CUDA device visible; nothing to measure\n");
    return 0;
  }
  cudaDeviceProp prop{};
  LUONG_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device 0: %s, %d SMs, %.0f GiB\n", prop.name, prop.multiProcessorCount,
              static_cast<double>(prop.totalGlobalMem) / (1 << 30));
  try {
    gemm_table();
    lstm_table();
  } catch (const luong::Error& e) {
    std::fprintf(stderr, "luong_gpu_bench: %s\n", e.what());
    return 1;
  }
  const luong::MemoryStats s = luong::allocator_for(Device::cuda(0)).stats();
  std::printf("\ncaching allocator: peak %.2f GiB, %lld cudaMalloc calls\n", static_cast<double>(s.peak) / (1 << 30),
              static_cast<long long>(s.num_allocs));
  return 0;
}
