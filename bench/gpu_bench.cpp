// GPU benchmark: GEMM throughput on the shapes of a Luong NMT step (4-layer LSTM, hidden 1000, batch 128,
// 50 steps, vocabulary 50k) through the engine (luong::cuda::gemm / gemm_bf16) and through cuBLAS directly,
// in float32, TF32 and bf16. Prints tables; asserts nothing.
// The last table sets the kernels against the ceilings of issue 9's GPU targets, measured on this device:
// recurrent GEMMs against the time to stream their operands at the measured HBM bandwidth, time-batched
// GEMMs against the measured bf16 GEMM peak, fused pointwise kernels against the measured HBM bandwidth.
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

// The bar for every kernel class: at least 70% of its ceiling.
constexpr double kTargetFraction = 0.70;

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

// What this device can do, measured rather than taken from a data sheet: a device-to-device copy of 1 GiB
// (each byte read once and written once) for HBM bandwidth, and an 8192^3 bf16 cuBLAS GEMM with float32
// accumulation (the compute type training uses) for the tensor-core peak.
struct Ceilings {
  double hbm_gbs = 0;
  double bf16_tflops = 0;
};

Ceilings measure_ceilings() {
  Ceilings c;
  const int64_t bytes = int64_t{1} << 30;
  Tensor src = Tensor::empty({bytes / 4}, DType::f32, Device::cuda(0));
  Tensor dst = Tensor::empty({bytes / 4}, DType::f32, Device::cuda(0));
  LUONG_CUDA_CHECK(cudaMemsetAsync(src.raw(), 1, static_cast<size_t>(bytes), luong::cuda::stream()));
  const double copy_ms = time_ms([&] {
    LUONG_CUDA_CHECK(cudaMemcpyAsync(dst.raw(), src.raw(), static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice,
                                     luong::cuda::stream()));
  });
  c.hbm_gbs = 2.0 * static_cast<double>(bytes) / (copy_ms * 1e-3) / 1e9;
  const GemmShape big{"peak", false, 8192, 8192, 8192};
  Tensor a16 = to_bf16(random_device_floats(big.m * big.k, 11)), b16 = to_bf16(random_device_floats(big.k * big.n, 12));
  Tensor out = Tensor::empty({big.m * big.n}, DType::f32, Device::cuda(0));
  DirectBlas direct;
  const double gemm_ms =
      time_ms([&] { direct.gemm(big, a16.raw(), b16.raw(), out.raw(), CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F); });
  c.bf16_tflops = 2.0 * 8192.0 * 8192.0 * 8192.0 / (gemm_ms * 1e-3) / 1e12;
  return c;
}

struct TargetRow {
  std::string kernel, measure;
  double achieved, ceiling;  // in the unit the measure names
};

// One recurrent product h_{t-1} U (batch 128, hidden 1000, 4 gates) per call, cycling through enough
// distinct weights (> 256 MB) that each call reads its weight from HBM, as a real step does: between two
// uses of one layer's U the other layers' weights have passed through the 50 MB L2. The ceiling is the
// time to read A and W and write C once at the measured bandwidth.
std::vector<TargetRow> recurrent_rows(const Ceilings& c) {
  const int64_t m = 128, n = 4000, k = 1000;
  std::vector<TargetRow> rows;
  for (const bool bf16 : {false, true}) {
    const int64_t w_bytes = k * n * (bf16 ? 2 : 4);
    const int copies = static_cast<int>((int64_t{256} << 20) / w_bytes + 1);
    std::vector<Tensor> weights;
    for (int i = 0; i < copies; ++i) {
      Tensor w = random_device_floats(k * n, 20 + static_cast<uint32_t>(i));
      weights.push_back(bf16 ? to_bf16(w) : w);
    }
    Tensor a = random_device_floats(m * k, 13), out = Tensor::empty({m * n}, DType::f32, Device::cuda(0));
    int next = 0;
    const double ms = time_ms([&] {
      const Tensor& w = weights[static_cast<size_t>(next++ % copies)];
      if (bf16) {
        // training's path under bf16: the weight's per-scope bf16 copy, the activation converted per call
        luong::cuda::gemm_bf16_weight(false, m, n, k, a.data<float>(), static_cast<const uint16_t*>(w.raw()), 0.f,
                                      out.data<float>());
      } else {
        luong::cuda::gemm<float>(false, false, m, n, k, 1.f, a.data<float>(), w.data<float>(), 0.f, out.data<float>());
      }
    });
    const double bytes = static_cast<double>(w_bytes + m * k * 4 + m * n * 4);
    rows.push_back({bf16 ? "recurrent h U, bf16 weight copy" : "recurrent h U, float32", "HBM GB/s",
                    bytes / (ms * 1e-3) / 1e9, c.hbm_gbs});
  }
  return rows;
}

// The time-batched products of a step in bf16, operands already bf16 (what cuBLAS gets), against the peak.
std::vector<TargetRow> batched_rows(const Ceilings& c) {
  const std::vector<GemmShape> shapes = {
      {"input proj x W (50 steps)", false, 6400, 4000, 1000},
      {"weight grad x^T dz", true, 1000, 4000, 6400},
      {"output logits (50k vocab)", false, 6400, 50000, 1000},
  };
  std::vector<TargetRow> rows;
  for (const GemmShape& g : shapes) {
    Tensor a16 = to_bf16(random_device_floats(g.m * g.k, 1)), b16 = to_bf16(random_device_floats(g.k * g.n, 2));
    Tensor out = Tensor::empty({g.m * g.n}, DType::f32, Device::cuda(0));
    const double ms = time_ms([&] {
      luong::cuda::gemm_bf16(g.trans_a, false, g.m, g.n, g.k, 1.f, static_cast<const uint16_t*>(a16.raw()),
                             static_cast<const uint16_t*>(b16.raw()), 0.f, out.data<float>());
    });
    const double flop = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
    rows.push_back({g.what, "bf16 TFLOP/s", flop / (ms * 1e-3) / 1e12, c.bf16_tflops});
  }
  return rows;
}

// Fused pointwise kernels at the paper's shape and at one large enough to leave launch latency out, each
// byte counted once (reads + writes), against the measured HBM bandwidth.
std::vector<TargetRow> pointwise_rows(const Ceilings& c) {
  std::vector<TargetRow> rows;
  for (auto [B, H] : {std::pair<int64_t, int64_t>{128, 1000}, {4096, 4096}}) {
    const int64_t n = B * H;
    Tensor z = random_device_floats(4 * n, 3), c_prev = random_device_floats(n, 4);
    Tensor gates = Tensor::empty({4 * n}, DType::f32, Device::cuda(0)), cell = random_device_floats(n, 5);
    Tensor h = random_device_floats(n, 7), dh = random_device_floats(n, 8), dc = random_device_floats(n, 9);
    Tensor dz = Tensor::empty({4 * n}, DType::f32, Device::cuda(0)), dc_prev = random_device_floats(n, 10);
    const double fwd = time_ms([&] {
      luong::cuda::lstm_cell_forward<float>(B, H, z.data<float>(), c_prev.data<float>(), gates.data<float>(),
                                            cell.data<float>(), h.data<float>());
    });
    const double bwd = time_ms([&] {
      luong::cuda::lstm_cell_backward<float>(B, H, gates.data<float>(), c_prev.data<float>(), cell.data<float>(),
                                             dh.data<float>(), dc.data<float>(), dz.data<float>(),
                                             dc_prev.data<float>());
    });
    const double bytes = static_cast<double>(n) * sizeof(float);
    const std::string shape = " " + std::to_string(B) + "x" + std::to_string(H);
    rows.push_back({"LSTM cell forward" + shape, "HBM GB/s", 11 * bytes / (fwd * 1e-3) / 1e9, c.hbm_gbs});
    rows.push_back({"LSTM cell backward" + shape, "HBM GB/s", 14 * bytes / (bwd * 1e-3) / 1e9, c.hbm_gbs});
  }
  // The conversion behind every bf16 product's activation operand: read 4 bytes, write 2.
  const int64_t n = int64_t{64} << 20;
  Tensor x = random_device_floats(n, 14), y = Tensor::empty({n}, DType::bf16, Device::cuda(0));
  const double ms = time_ms([&] { luong::cuda::float_to_bf16(n, x.data<float>(), static_cast<uint16_t*>(y.raw())); });
  rows.push_back(
      {"float32 -> bf16 conversion 64M", "HBM GB/s", 6.0 * static_cast<double>(n) / (ms * 1e-3) / 1e9, c.hbm_gbs});
  return rows;
}

void targets_table() {
  const Ceilings c = measure_ceilings();
  std::printf(
      "\nCeilings measured here: HBM %.0f GB/s (1 GiB device-to-device copy), bf16 GEMM %.0f TFLOP/s "
      "(8192^3, float32 accumulation)\n",
      c.hbm_gbs, c.bf16_tflops);
  std::printf("Issue 9's GPU targets: each kernel at >= %.0f%% of its ceiling\n", kTargetFraction * 100);
  std::printf("%-36s %-14s %10s %10s %8s %6s\n", "kernel", "measure", "achieved", "ceiling", "of it", "target");
  std::vector<TargetRow> rows = recurrent_rows(c);
  for (auto* more : {&batched_rows, &pointwise_rows})
    for (TargetRow& r : (*more)(c)) rows.push_back(std::move(r));
  int met = 0;
  for (const TargetRow& r : rows) {
    const double frac = r.achieved / r.ceiling;
    met += frac >= kTargetFraction;
    std::printf("%-36s %-14s %10.1f %10.1f %7.0f%% %6s\n", r.kernel.c_str(), r.measure.c_str(), r.achieved, r.ceiling,
                frac * 100, frac >= kTargetFraction ? "met" : "below");
  }
  std::printf("targets met: %d of %zu\n", met, rows.size());
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
    targets_table();
  } catch (const luong::Error& e) {
    std::fprintf(stderr, "luong_gpu_bench: %s\n", e.what());
    return 1;
  }
  const luong::MemoryStats s = luong::allocator_for(Device::cuda(0)).stats();
  std::printf("\ncaching allocator: peak %.2f GiB, %lld cudaMalloc calls\n", static_cast<double>(s.peak) / (1 << 30),
              static_cast<long long>(s.num_allocs));
  return 0;
}
