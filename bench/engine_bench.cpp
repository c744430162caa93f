// Engine benchmarks: GEMM through the engine vs raw OpenBLAS, autograd overhead per tiny op, what a loop below
// the parallel grain costs, and the fused LSTM cell against its composition. Prints a table; never asserted.
#include <cblas.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/fma_peak.h"
#include "framework/core/heap_allocator.h"
#include "framework/core/process_setup.h"
#include "framework/kernels/cpu/blocked_gemm.h"
#include "framework/kernels/cpu/lstm_cell.h"
#include "framework/kernels/cpu/optim_kernels.h"
#include "framework/kernels/cpu/packed_gemm.h"
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

// The decoder's per-step products against a weight: OpenBLAS (packs B on every call) against
// kernels/cpu/packed_gemm.h with B packed once. "rotation" cycles through `weights` distinct matrices, as a
// decoder step does (W_f, U and W of each layer, W_c), so B comes from L3 rather than staying in L2.
void packed_gemm_rows(Generator& g) {
  std::printf("\n## Small-batch GEMM against a packed weight (float32): OpenBLAS vs kernels/cpu/packed_gemm\n\n");
  if (!cpu::packed_gemm_enabled()) {
    std::printf("packed GEMM not available on this CPU (needs AVX-512F) or LUONG_PACKED_GEMM=0\n");
    return;
  }
  std::printf("| C (M x N) = A (M x K) op(B) | op | weights in rotation | OpenBLAS GFLOP/s | packed GFLOP/s | ratio | "
              "pack once (us) |\n|---|---|---|---|---|---|---|\n");
  struct Case {
    int64_t m, n, k;
    bool trans;
    int weights;
  };
  const std::vector<Case> cases{{64, 1024, 256, false, 1}, {64, 1024, 256, false, 5}, {64, 256, 1024, true, 1},
                                {64, 256, 1024, true, 5},  {64, 256, 512, false, 1},  {128, 4000, 1000, false, 1},
                                {128, 1000, 4000, true, 1}};
  for (const Case& c : cases) {
    Tensor a = rnd(g, {c.m, c.k}).data(), out = Tensor::empty({c.m, c.n});
    std::vector<Tensor> w, packed;
    for (int i = 0; i < c.weights; ++i) {
      w.push_back(c.trans ? rnd(g, {c.n, c.k}).data() : rnd(g, {c.k, c.n}).data());
      packed.push_back(Tensor::empty({cpu::packed_size(c.k, c.n)}));
    }
    const double t_pack = time_best([&] { cpu::pack_b(c.trans, c.k, c.n, w[0].data<float>(), packed[0].data<float>()); });
    for (int i = 0; i < c.weights; ++i) cpu::pack_b(c.trans, c.k, c.n, w[i].data<float>(), packed[i].data<float>());
    const double t_blas = time_best([&] {
      for (int i = 0; i < c.weights; ++i)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, c.trans ? CblasTrans : CblasNoTrans, (int)c.m, (int)c.n, (int)c.k, 1.f,
                    a.data<float>(), (int)c.k, w[i].data<float>(), c.trans ? (int)c.k : (int)c.n, 1.f,
                    out.data<float>(), (int)c.n);
    });
    const double t_packed = time_best([&] {
      for (int i = 0; i < c.weights; ++i)
        cpu::gemm_packed(c.m, c.n, c.k, a.data<float>(), packed[i].data<float>(), 1.f, out.data<float>());
    });
    const double flop = 2.0 * c.m * c.n * c.k * c.weights;
    std::printf("| (%ld x %ld) = (%ld x %ld) . (%ld x %ld) | %s | %d | %.1f | %.1f | %.2f | %.0f |\n", (long)c.m,
                (long)c.n, (long)c.m, (long)c.k, (long)c.k, (long)c.n, c.trans ? "B^T" : "B", c.weights,
                flop / t_blas * 1e-9, flop / t_packed * 1e-9, t_blas / t_packed, t_pack * 1e6);
  }
}

// The training step's large products (bench/luong_step_bench's model: batch 64, 20 + 20 tokens, 2 x 256,
// vocabulary 8000, generator chunks of 256 rows): OpenBLAS against kernels/cpu/blocked_gemm, which gemm()
// uses for them. Timed alternately, best of each, so a noisy neighbour hits both columns alike.
void blocked_gemm_rows(Generator& g) {
  std::printf("\n## Large GEMM (float32): OpenBLAS vs kernels/cpu/blocked_gemm\n\n");
  if (!cpu::packed_gemm_enabled()) {
    std::printf("blocked GEMM not available on this CPU (needs AVX-512F) or LUONG_PACKED_GEMM=0\n");
    return;
  }
  std::printf(
      "| product in the step | C (M x N) = op(A) op(B), K | op | beta | OpenBLAS GFLOP/s | blocked GFLOP/s | "
      "ratio |\n|---|---|---|---|---|---|---|\n");
  struct Case {
    const char* what;
    bool ta, tb;
    int64_t m, n, k;
    float beta;
  };
  const std::vector<Case> cases{{"generator logits, one chunk", false, false, 256, 8000, 256, 0.f},
                                {"generator dX, one chunk", false, true, 256, 256, 8000, 0.f},
                                {"generator dW, one chunk (accumulated)", true, false, 256, 8000, 256, 1.f},
                                {"LSTM weight gradient, K = batch x steps", true, false, 256, 1024, 1280, 0.f},
                                {"encoder input projection", false, false, 1280, 1024, 256, 0.f},
                                {"encoder input projection dX", false, true, 1280, 256, 1024, 0.f},
                                {"attention weight gradient", true, false, 512, 256, 1280, 0.f}};
  for (const Case& c : cases) {
    Tensor a = rnd(g, c.ta ? Shape{c.k, c.m} : Shape{c.m, c.k}).data();
    Tensor b = rnd(g, c.tb ? Shape{c.n, c.k} : Shape{c.k, c.n}).data();
    Tensor out = rnd(g, {c.m, c.n}).data();
    auto blas = [&] {
      cblas_sgemm(CblasRowMajor, c.ta ? CblasTrans : CblasNoTrans, c.tb ? CblasTrans : CblasNoTrans, (int)c.m, (int)c.n,
                  (int)c.k, 1.f, a.data<float>(), c.ta ? (int)c.m : (int)c.k, b.data<float>(),
                  c.tb ? (int)c.k : (int)c.n, c.beta, out.data<float>(), (int)c.n);
    };
    auto blocked = [&] {
      cpu::blocked_gemm(c.ta, c.tb, c.m, c.n, c.k, 1.f, a.data<float>(), b.data<float>(), c.beta, out.data<float>());
    };
    double t_blas = 1e30, t_blocked = 1e30;
    for (int round = 0; round < 4; ++round) {
      t_blas = std::min(t_blas, time_best(blas, 3, 0.03));
      t_blocked = std::min(t_blocked, time_best(blocked, 3, 0.03));
    }
    const double flop = 2.0 * c.m * c.n * c.k;
    std::printf("| %s | %ld x %ld, K %ld | %s%s | %g | %.1f | %.1f | %.2f |\n", c.what, (long)c.m, (long)c.n, (long)c.k,
                c.ta ? "A^T " : "A ", c.tb ? "B^T" : "B", c.beta, flop / t_blas * 1e-9, flop / t_blocked * 1e-9,
                t_blas / t_blocked);
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

// The cell's pointwise kernels alone, in the effective bandwidth of the data they touch (forward: z, c_prev
// in, gates, c, h out = 11 H floats a row; backward: gates, c_prev, c, dh, dc in, dz, dc_prev out = 13 H).
// Both loops are meant to vectorise; a scalar one runs at a quarter of the rate (it did, unnoticed, when a
// run-time flag put a conditional load in the backward loop: 2.8% of a CPU training step).
void lstm_kernel_rows(Generator& g) {
  std::printf("\n## LSTM cell pointwise kernels alone (float32, 2 threads as configured)\n\n");
  std::printf("| batch x hidden | forward us | forward GB/s | backward us | backward GB/s |\n|---|---|---|---|---|\n");
  for (auto [B, H] : std::vector<std::pair<int64_t, int64_t>>{{64, 256}, {128, 1000}}) {
    auto buf = [&](int64_t n) {
      std::vector<float> v(static_cast<size_t>(n));
      for (auto& x : v) x = static_cast<float>(g.uniform() * 2.0 - 1.0);
      return v;
    };
    std::vector<float> z = buf(B * 4 * H), gates(z.size()), dz(z.size()), c_prev = buf(B * H), c(c_prev.size()),
                       h(c_prev.size()), dh = buf(B * H), dc = buf(B * H), dc_prev(c_prev.size());
    const double t_f = time_best(
        [&] { cpu::lstm_cell_forward<float>(B, H, z.data(), c_prev.data(), gates.data(), c.data(), h.data()); });
    const double t_b = time_best([&] {
      cpu::lstm_cell_backward<float>(B, H, gates.data(), c_prev.data(), c.data(), dh.data(), dc.data(), dz.data(),
                                     dc_prev.data(), false);
    });
    const double row_bytes = static_cast<double>(B * H) * sizeof(float);
    std::printf("| %ld x %ld | %.1f | %.1f | %.1f | %.1f |\n", (long)B, (long)H, t_f * 1e6, 11 * row_bytes / t_f * 1e-9,
                t_b * 1e6, 13 * row_bytes / t_b * 1e-9);
  }
}

// What a loop below the parallel grain costs per call, three ways: inline, through cpu::parallel_ranges (which
// enters no OpenMP region below the grain), and as the kernels were written before it, `#pragma omp parallel
// for` with a false if-clause (libgomp still starts a team of one, and ends it with a futex wake).
__attribute__((noinline)) void small_loop_inline(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * 1.0001f + 1.0f;
}
__attribute__((noinline)) void small_loop_ranges(float* x, int64_t n) {
  cpu::parallel_ranges(n, n > cpu::kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) x[i] = x[i] * 1.0001f + 1.0f;
  });
}
__attribute__((noinline)) void small_loop_if_clause(float* x, int64_t n) {
#pragma omp parallel for schedule(static) if (n > cpu::kParallelGrain)
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * 1.0001f + 1.0f;
}

void small_loop_rows() {
  std::printf("\n## A loop below the parallel grain (16 floats), per call\n\n");
  std::printf("| how | ns per call |\n|---|---|\n");
  std::vector<float> x(16, 1.0f);
  const int reps = 100000;
  const int64_t n = static_cast<int64_t>(x.size());
  const std::pair<const char*, void (*)(float*, int64_t)> ways[] = {
      {"plain loop", small_loop_inline},
      {"cpu::parallel_ranges (inline below the grain)", small_loop_ranges},
      {"`#pragma omp parallel for if (...)`, false", small_loop_if_clause}};
  for (const auto& [name, run] : ways) {
    const double t = time_best([&] {
      for (int i = 0; i < reps; ++i) run(x.data(), n);
    });
    std::printf("| %s | %.1f |\n", name, t / reps * 1e9);
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

// What optim.ema_decay adds to a step (its update, a pass over the parameters) and to each validation and
// checkpoint (two swaps), next to the Adam update every step already takes; 7M parameters is about the
// benchmark model (embeddings 256, 2 x 256 LSTMs, 8,000 words) and configs/multi30k.yaml's.
void optimizer_pass_rows(Generator& g) {
  std::printf(
      "\n## Passes over the parameters (float32): the Adam update, the parameter average (optim.ema_decay), "
      "its swap\n\n");
  std::printf(
      "| parameters | Adam update ms | average update ms | swap ms | average / Adam |\n|---|---|---|---|---|\n");
  for (int64_t n : {int64_t{7'000'000}, int64_t{12'000'000}}) {
    std::vector<float> p(static_cast<size_t>(n)), grad(p.size()), m(p.size(), 0.0f), v(p.size(), 0.0f), avg(p.size());
    for (size_t i = 0; i < p.size(); ++i)
      p[i] = static_cast<float>(g.uniform() * 0.2 - 0.1), grad[i] = static_cast<float>(g.uniform() - 0.5),
      avg[i] = p[i];
    const double adam = time_best([&] {
      cpu::adam_update<float>(n, p.data(), grad.data(), 1.0f, m.data(), v.data(), 1e-9f, 0.9f, 0.999f, 1e-8f, 0.0f,
                              true, 0.5f, 0.5f);
    });
    const double ema = time_best([&] { cpu::ema_update<float>(n, avg.data(), p.data(), 0.001f); });
    const double swap = time_best([&] { cpu::swap_values<float>(n, avg.data(), p.data()); });
    std::printf("| %.1fM | %.2f | %.2f | %.2f | %.2f |\n", static_cast<double>(n) / 1e6, adam * 1e3, ema * 1e3,
                swap * 1e3, ema / adam);
  }
}

}  // namespace

int main(int argc, char** argv) {
  configure_process(argc, argv);
  std::printf(
      "# luong engine benchmark\n\nOpenBLAS core: %s, OpenMP threads: %d, AVX-512 GEMMs (packed, blocked): %s, malloc: "
      "%s\n",
      blas_core_name(), cpu::num_threads(), cpu::packed_gemm_enabled() ? "on" : "off", heap_allocator_name().c_str());
  const bench::FmaPeak peak = bench::measure_fma_peak();
  std::printf(
      "\n## The cores' float32 FMA peak (bench/fma_peak.h)\n\n| ISA | 1 thread GFLOP/s | %d threads GFLOP/s | clock "
      "(dependent adds) GHz |\n|---|---|---|---|\n| %s | %.1f | %.1f | %.2f |\n",
      peak.threads, peak.isa, peak.one_thread, peak.all_threads, peak.ghz);
  if (peak.bf16_dot_one_thread > 0)
    std::printf("| avx512_bf16 dot products (VDPBF16PS) | %.1f | %.1f | |\n", peak.bf16_dot_one_thread,
                peak.bf16_dot_all_threads);
  Generator g(1);
  gemm_rows(g);
  packed_gemm_rows(g);
  blocked_gemm_rows(g);
  overhead_rows(g);
  small_loop_rows();
  lstm_rows(g);
  lstm_kernel_rows(g);
  attention_rows(g);
  optimizer_pass_rows(g);
  return 0;
}
