// bf16 GEMMs on AMX tiles (kernels/cpu/amx_bf16_gemm) against the float32 kernels gemm() uses by default, on
// the products of the benchmark model's step. Prints a table; never asserted. Without AMX it says so.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "framework/core/precision.h"
#include "framework/core/process_setup.h"
#include "framework/kernels/cpu/amx_bf16_gemm.h"
#include "framework/kernels/cpu/gemm.h"
#include "framework/kernels/cpu/parallel.h"
#include "tests/support/bench_util.h"
#include "tests/support/random_floats.h"

using namespace luong;
using luong::bench::time_best;

int main(int argc, char** argv) {
  configure_process(argc, argv);
  std::printf("# bf16 GEMM on AMX tiles against float32 (OpenMP threads: %d)\n\n", cpu::num_threads());
  if (!cpu::amx_bf16_supported()) {
    std::printf("this CPU or kernel offers no AMX-BF16: nothing to measure\n");
    return 0;
  }
  std::printf(
      "| product in the step | C (M x N) = op(A) op(B), K | op | float32 GFLOP/s | AMX bf16 GFLOP/s | AMX, B packed "
      "once GFLOP/s | packed / float32 |\n|---|---|---|---|---|---|---|\n");
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
    std::vector<uint16_t> packed(static_cast<size_t>(cpu::amx_packed_size(c.k, c.n)));
    cpu::amx_pack_b(c.tb, c.k, c.n, b.data(), packed.data());
    auto f32 = [&] { cpu::gemm<float>(c.ta, c.tb, c.m, c.n, c.k, 1.f, a.data(), b.data(), 0.f, out.data()); };
    auto amx = [&] { cpu::amx_bf16_gemm(c.ta, c.tb, c.m, c.n, c.k, 1.f, a.data(), b.data(), 0.f, out.data()); };
    auto amx_packed = [&] { cpu::amx_bf16_gemm_packed(c.m, c.n, c.k, a.data(), packed.data(), 0.f, out.data()); };
    double t_f32 = 1e30, t_amx = 1e30, t_packed = 1e30;
    for (int round = 0; round < 4; ++round) {
      t_f32 = std::min(t_f32, time_best(f32, 3, 0.03));
      t_amx = std::min(t_amx, time_best(amx, 3, 0.03));
      if (!c.ta) t_packed = std::min(t_packed, time_best(amx_packed, 3, 0.03));  // the packed form takes A as is
    }
    const double flop = 2.0 * c.m * c.n * c.k * 1e-9;
    char packed_col[32] = "-", ratio_col[32] = "-";
    if (!c.ta) {
      std::snprintf(packed_col, sizeof packed_col, "%.1f", flop / t_packed);
      std::snprintf(ratio_col, sizeof ratio_col, "%.2f", t_f32 / t_packed);
    } else {
      std::snprintf(ratio_col, sizeof ratio_col, "%.2f", t_f32 / t_amx);
    }
    std::printf("| %s | %ld x %ld, K %ld | %s%s | %.1f | %.1f | %s | %s |\n", c.what, (long)c.m, (long)c.n, (long)c.k,
                c.ta ? "A^T " : "A ", c.tb ? "B^T" : "B", flop / t_f32, flop / t_amx, packed_col, ratio_col);
  }
  return 0;
}
