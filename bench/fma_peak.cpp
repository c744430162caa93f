#include "bench/fma_peak.h"

#include <omp.h>

#include <algorithm>
#include <chrono>

namespace luong::bench {
namespace {

constexpr long kIterations = 8'000'000;  // x 12 FMAs: about 0.05 s a run at 3 GHz
constexpr int kRuns = 5;
constexpr int kChains = 12;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The chains are written in assembly: compiled from intrinsics, GCC kept an array of accumulators in memory
// and stored all twelve every iteration, which measured a third of the peak. The operands are registers
// only (ymm/zmm 14 and 15 hold the factors; the values never matter), so nothing but the FMAs is timed.
#define LUONG_FMA12(R)                                                                                       \
  "vfmadd231ps %%" R "14, %%" R "15, %%" R "0\n\t"                                                        \
  "vfmadd231ps %%" R "14, %%" R "15, %%" R "1\n\t"                                                        \
  "vfmadd231ps %%" R "14, %%" R "15, %%" R "2\n\t"                                                        \
  "vfmadd231ps %%" R "14, %%" R "15, %%" R "3\n\t"                                                        \
  "vfmadd231ps %%" R "14, %%" R "15, %%" R "4\n\t"                                                        \
  "vfmadd231ps %%" R "14, %%" R "15, %%" R "5\n\t"                                                        \
  "vfmadd231ps %%" R "14, %%" R "15, %%" R "6\n\t"                                                        \
  "vfmadd231ps %%" R "14, %%" R "15, %%" R "7\n\t"                                                        \
  "vfmadd231ps %%" R "14, %%" R "15, %%" R "8\n\t"                                                        \
  "vfmadd231ps %%" R "14, %%" R "15, %%" R "9\n\t"                                                        \
  "vfmadd231ps %%" R "14, %%" R "15, %%" R "10\n\t"                                                       \
  "vfmadd231ps %%" R "14, %%" R "15, %%" R "11\n\t"
#define LUONG_FMA_CLOBBERS \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm14", "xmm15"

__attribute__((target("avx2,fma"), noinline)) void chains_avx2(long n) {
  asm volatile("vxorps %%xmm14, %%xmm14, %%xmm14\n\tvxorps %%xmm15, %%xmm15, %%xmm15" ::: "xmm14", "xmm15");
  for (long i = 0; i < n; ++i) asm volatile(LUONG_FMA12("ymm")::: LUONG_FMA_CLOBBERS);
  asm volatile("vzeroupper");
}

__attribute__((target("avx512f"), noinline)) void chains_avx512(long n) {
  asm volatile("vpxord %%zmm14, %%zmm14, %%zmm14\n\tvpxord %%zmm15, %%zmm15, %%zmm15" ::: "xmm14", "xmm15");
  for (long i = 0; i < n; ++i) asm volatile(LUONG_FMA12("zmm")::: LUONG_FMA_CLOBBERS);
  asm volatile("vzeroupper");
}

// The same twelve chains of AVX512-BF16 dot products (each 16 lanes x 2 products x 2 flops).
#define LUONG_DPBF16_12                                                          \
  "vdpbf16ps %%zmm14, %%zmm15, %%zmm0\n\tvdpbf16ps %%zmm14, %%zmm15, %%zmm1\n\t" \
  "vdpbf16ps %%zmm14, %%zmm15, %%zmm2\n\tvdpbf16ps %%zmm14, %%zmm15, %%zmm3\n\t" \
  "vdpbf16ps %%zmm14, %%zmm15, %%zmm4\n\tvdpbf16ps %%zmm14, %%zmm15, %%zmm5\n\t" \
  "vdpbf16ps %%zmm14, %%zmm15, %%zmm6\n\tvdpbf16ps %%zmm14, %%zmm15, %%zmm7\n\t" \
  "vdpbf16ps %%zmm14, %%zmm15, %%zmm8\n\tvdpbf16ps %%zmm14, %%zmm15, %%zmm9\n\t" \
  "vdpbf16ps %%zmm14, %%zmm15, %%zmm10\n\tvdpbf16ps %%zmm14, %%zmm15, %%zmm11\n\t"

__attribute__((target("avx512f,avx512bf16"), noinline)) void chains_bf16_dot(long n) {
  asm volatile("vpxord %%zmm14, %%zmm14, %%zmm14\n\tvpxord %%zmm15, %%zmm15, %%zmm15" ::: "xmm14", "xmm15");
  for (long i = 0; i < n; ++i) asm volatile(LUONG_DPBF16_12::: LUONG_FMA_CLOBBERS);
  asm volatile("vzeroupper");
}

__attribute__((noinline)) long add_chain(long n) {
  long x = 0;
  for (long i = 0; i < n; ++i) asm volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
  return x;
}

// The fastest of a few short runs: a VM's vCPU is sometimes descheduled mid-run, which only ever slows a
// run down (one such run read 2.31 GHz against 2.84-2.91 in the others).
template <class F>
double best_rate(double work, F&& run) {
  double best = 0;
  for (int r = 0; r < kRuns; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    best = std::max(best, work / seconds_since(t0) * 1e-9);
  }
  return best;
}

}  // namespace

FmaPeak measure_fma_peak() {
  FmaPeak p;
  int lanes = 0;
  void (*chains)(long) = nullptr;
  if (__builtin_cpu_supports("avx512f")) {
    p.isa = "avx512f", lanes = 16, chains = chains_avx512;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    p.isa = "avx2+fma", lanes = 8, chains = chains_avx2;
  }
  p.threads = omp_get_max_threads();
  const double flop = 2.0 * lanes * kChains * static_cast<double>(kIterations);
  if (chains) {
    // Wake the cores to their working clock (and start OpenMP's threads) before timing.
#pragma omp parallel
    chains(kIterations);
    p.one_thread = best_rate(flop, [&] { chains(kIterations); });
    p.all_threads = best_rate(flop * p.threads, [&] {
#pragma omp parallel
      chains(kIterations);
    });
  }
  if (__builtin_cpu_supports("avx512bf16")) {
    const double dot_flop = 64.0 * kChains * static_cast<double>(kIterations);
    p.bf16_dot_one_thread = best_rate(dot_flop, [&] { chains_bf16_dot(kIterations); });
    p.bf16_dot_all_threads = best_rate(dot_flop * p.threads, [&] {
#pragma omp parallel
      chains_bf16_dot(kIterations);
    });
  }
  p.ghz = best_rate(4.0 * kIterations, [&] {
    volatile long keep = add_chain(kIterations);
    (void)keep;
  });
  return p;
}

}  // namespace luong::bench
