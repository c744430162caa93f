// bf16 GEMMs on the CPU's bf16 instructions (kernels/cpu/bf16_gemm: AMX tiles, AVX512-BF16 vectors, each that the
// CPU offers) against the float32 kernels gemm() uses by default, on the products of the benchmark model's step.
// Prints a table; never asserted. A CPU with neither kernel says so.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "framework/core/precision.h"
#include "framework/core/process_setup.h"
#include "framework/kernels/cpu/bf16_gemm.h"
#include "framework/kernels/cpu/gemm.h"
#include "framework/kernels/cpu/parallel.h"
#include "tests/support/bench_util.h"
#include "tests/support/random_floats.h"

using namespace luong;
using luong::bench::time_best;

int main(int argc, char** argv) {
  configure_process(argc, argv);
  std::printf("# bf16 GEMMs against float32 (OpenMP threads: %d)\n\n", cpu::num_threads());
  std::vector<cpu::Bf16Kernel> kernels;
  for (cpu::Bf16Kernel k : {cpu::Bf16Kernel::amx, cpu::Bf16Kernel::avx512_bf16})
    if (cpu::bf16_kernel_supported(k)) kernels.push_back(k);
  if (kernels.empty()) {
    std::printf("this CPU or OS offers neither AMX-BF16 nor AVX512-BF16: nothing to measure\n");
    return 0;
  }
  const cpu::Bf16Kernel before = cpu::bf16_kernel();
  std::printf("| product in the step | C (M x N) = op(A) op(B), K | op | float32 GFLOP/s |");
  for (cpu::Bf16Kernel k : kernels)
    std::printf(" %s GFLOP/s | %s, B packed once | packed / float32 |", cpu::bf16_kernel_name(k),
                cpu::bf16_kernel_name(k));
  std::printf("\n|---|---|---|---|");
  for (size_t i = 0; i < kernels.size(); ++i) std::printf("---|---|---|");
  std::printf("\n");
  struct Case {
    const char* what;
    bool ta, tb;
    int64_t m, n, k;
  };
  const std::vector<Case> cases{{"decoder step, W or U", false, false, 64, 1024, 256},
                                {"decoder step dX", false, true, 64, 256, 1024},
                                {"generator logits, one chunk", false, false, 256, 8000, 256},
                                {"generator dX, one chunk", false, true, 256, 256, 8000},
                                {"generator dW, one chunk", true, false, 256, 8000, 256},
                                {"LSTM weight gradient, K = batch x steps", true, false, 256, 1024, 1280},
                                {"encoder input projection", false, false, 1280, 1024, 256}};
  for (const Case& c : cases) {
    const auto a = testing::random_floats(c.m * c.k, 1), b = testing::random_floats(c.k * c.n, 2);
    std::vector<float> out(static_cast<size_t>(c.m * c.n));
    std::vector<uint16_t> packed(static_cast<size_t>(cpu::bf16_packed_size(c.k, c.n)));
    cpu::bf16_pack_b(c.tb, c.k, c.n, b.data(), packed.data());
    auto f32 = [&] { cpu::gemm<float>(c.ta, c.tb, c.m, c.n, c.k, 1.f, a.data(), b.data(), 0.f, out.data()); };
    auto bf16 = [&] { cpu::bf16_gemm(c.ta, c.tb, c.m, c.n, c.k, 1.f, a.data(), b.data(), 0.f, out.data()); };
    auto bf16_packed = [&] { cpu::bf16_gemm_packed(c.m, c.n, c.k, a.data(), packed.data(), 0.f, out.data()); };
    // Rounds alternate the kernels, so a slow spell of the host falls on all of them.
    double t_f32 = 1e30;
    std::vector<double> t_bf16(kernels.size(), 1e30), t_packed(kernels.size(), 1e30);
    for (int round = 0; round < 4; ++round) {
      t_f32 = std::min(t_f32, time_best(f32, 3, 0.03));
      for (size_t i = 0; i < kernels.size(); ++i) {
        cpu::set_bf16_kernel(kernels[i]);
        t_bf16[i] = std::min(t_bf16[i], time_best(bf16, 3, 0.03));
        if (!c.ta) t_packed[i] = std::min(t_packed[i], time_best(bf16_packed, 3, 0.03));  // takes A as is
      }
      cpu::set_bf16_kernel(before);
    }
    const double flop = 2.0 * c.m * c.n * c.k * 1e-9;
    std::printf("| %s | %ld x %ld, K %ld | %s%s | %.1f |", c.what, (long)c.m, (long)c.n, (long)c.k,
                c.ta ? "A^T " : "A ", c.tb ? "B^T" : "B", flop / t_f32);
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (c.ta)
        std::printf(" %.1f | - | %.2f |", flop / t_bf16[i], t_f32 / t_bf16[i]);
      else
        std::printf(" %.1f | %.1f | %.2f |", flop / t_bf16[i], flop / t_packed[i], t_f32 / t_packed[i]);
    }
    std::printf("\n");
  }
  return 0;
}
