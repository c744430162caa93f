// Engine benchmarks: GEMM through the engine vs raw OpenBLAS, autograd overhead per tiny op, and the fused
// LSTM cell against its composition. Prints a table; never asserted.
#include <cblas.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "framework/core/process_setup.h"
#include "framework/kernels/cpu/parallel.h"
#include "framework/nn/attention/attention.h"
#include "framework/ops/ops.h"
#include "tests/support/bench_util.h"

using namespace luong;
using luong::bench::time_best;

namespace {

Variable rnd(Generator& g, const Shape& s, bool grad = false) {
  std::vector<double> v(static_cast<size_t>(shape_numel(s)));
  for (auto& x : v) x = g.uniform() * 0.2 - 0.1;
  return Variable(Tensor::from(v, s, DType::f32), grad);
}

void gemm_rows(Generator& g) {
  std::printf("\n## GEMM (float32, forward, no grad): engine matmul vs raw cblas_sgemm\n\n");
  std::printf("| shape (M x K) . (K x N) | engine GFLOP/s | OpenBLAS GFLOP/s | ratio |\n|---|---|---|---|\n");
  const std::vector<std::array<int64_t, 3>> shapes{{2048, 1024, 64}, {4096, 2048, 128}, {64, 256, 1024}, {1280, 256, 8000}};
  for (auto [m, k, n] : shapes) {
    Variable a = rnd(g, {m, k}), b = rnd(g, {k, n});
    Tensor c = Tensor::empty({m, n});
    NoGradGuard ng;
    const double t_engine = time_best([&] { matmul(a, b); });
    const double t_raw = time_best([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.f, a.data().data<float>(), (int)k,
                  b.data().data<float>(), (int)n, 0.f, c.data<float>(), (int)n);
    });
    const double flop = 2.0 * m * n * k;
    std::printf("| (%ld x %ld) . (%ld x %ld) | %.1f | %.1f | %.2f |\n", (long)m, (long)k, (long)k, (long)n,
                flop / t_engine * 1e-9, flop / t_raw * 1e-9, t_raw / t_engine);
  }
}

void overhead_rows(Generator& g) {
  std::printf("\n## Autograd overhead (one-element tensors, float32)\n\n| what | ns |\n|---|---|\n");
  Variable x = rnd(g, {1}, true), y = rnd(g, {1}, true);
  const int reps = 10000;
  const double t_fwd = time_best([&] {
    NoGradGuard ng;
    for (int i = 0; i < reps; ++i) add(x, y);
  });
  const double t_fb = time_best([&] {
    for (int i = 0; i < reps; ++i) sum(add(x, y)).backward();
  });
  const double t_sum_fb = time_best([&] {
    for (int i = 0; i < reps; ++i) sum(x).backward();
  });
  std::printf("| add, forward only (no grad) | %.0f |\n", t_fwd / reps * 1e9);
  std::printf("| add, forward + backward (recorded) | %.0f |\n", (t_fb - t_sum_fb) / reps * 1e9);
  std::printf("| sum + backward (graph of one op) | %.0f |\n", t_sum_fb / reps * 1e9);
}

void lstm_rows(Generator& g) {
  std::printf("\n## LSTM cell step, forward + backward (float32)\n\n");
  std::printf("| batch x hidden | fused us | composed us | speed-up |\n|---|---|---|---|\n");
  for (auto [B, H] : std::vector<std::pair<int64_t, int64_t>>{{64, 256}, {128, 1000}}) {
    Variable x = rnd(g, {B, H}, true), h = rnd(g, {B, H}, true), c = rnd(g, {B, H}, true);
    Variable W = rnd(g, {H, 4 * H}, true), U = rnd(g, {H, 4 * H}, true), b = rnd(g, {4 * H}, true);
    const double t_fused = time_best([&] {
      LstmState s = lstm_cell(x, {h, c}, W, U, b);
      add(sum(s.h), sum(s.c)).backward();
    });
    const double t_comp = time_best([&] {
      Variable z = add(add(matmul(x, W), matmul(h, U)), b);
      auto p = split(z, {H, H, H, H}, 1);
      Variable cn = add(mul(sigmoid(p[1]), c), mul(sigmoid(p[0]), tanh(p[2])));
      Variable hn = mul(sigmoid(p[3]), tanh(cn));
      add(sum(hn), sum(cn)).backward();
    });
    std::printf("| %ld x %ld | %.0f | %.0f | %.2f |\n", (long)B, (long)H, t_fused * 1e6, t_comp * 1e6, t_comp / t_fused);
  }
}

// One decoder step of global attention (score, masked softmax over the source, context) forward and
// backward, at the benchmark model's size and the paper model's.
void attention_rows(Generator& g) {
  std::printf("\n## Global attention step, forward + backward (float32)\n\n");
  std::printf("| variant | batch x source x hidden | us per step |\n|---|---|---|\n");
  for (const char* variant : {"dot", "general"})
    for (auto [B, S, H] : std::vector<std::array<int64_t, 3>>{{64, 20, 256}, {128, 50, 1000}}) {
      AttentionOptions o;
      o.hidden_size = H;
      auto att = make_attention(variant, o);
      Variable memory = rnd(g, {B, S, H}, true), h = rnd(g, {B, H}, true);
      std::vector<double> mask(static_cast<size_t>(B * S), 1.0);
      for (int64_t b = 0; b < B; b += 2) mask[static_cast<size_t>(b * S + S - 1)] = 0;  // some padding
      const AttentionMemory mem = att->prepare(memory, Tensor::from(mask, {B, S}, DType::u8));
      const double t = time_best([&] {
        AttentionOutput a = att->attend(h, mem, 0);
        sum(mul(a.context, a.context)).backward();
      });
      std::printf("| %s | %ld x %ld x %ld | %.1f |\n", variant, (long)B, (long)S, (long)H, t * 1e6);
    }
}

}  // namespace

int main(int argc, char** argv) {
  configure_process(argc, argv);
  std::printf("# luong engine benchmark\n\nOpenBLAS core: %s, OpenMP threads: %d\n", blas_core_name(),
              cpu::num_threads());
  Generator g(1);
  gemm_rows(g);
  overhead_rows(g);
  lstm_rows(g);
  attention_rows(g);
  return 0;
}
