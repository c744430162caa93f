// The LSTM cell's pointwise kernels, compiled once per vector build (wide_vectors.h): lstm_cell.cpp includes this
// with LUONG_CPU_ISA = x86_v3 (the library's baseline flags), lstm_cell_avx512.cpp with x86_v4 (-march=x86-64-v4,
// 512-bit vectors). Everything here lives in luong::cpu::LUONG_CPU_ISA, so the two builds never share a symbol:
// a linker keeping one copy of a function both builds define would run AVX-512 code on a CPU without it.
// No include guard: one inclusion per file, by design.
#ifndef LUONG_CPU_ISA
#error "define LUONG_CPU_ISA (the namespace of this build of the kernels) before including lstm_cell_body.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "framework/kernels/cpu/parallel.h"
#include "framework/kernels/cpu/vec_math.h"

namespace luong::cpu::LUONG_CPU_ISA {
namespace {

// One row's gates through separate restrict pointers (i, f, g, o blocks of z, gates and the bias): GCC
// vectorises the loop only when it can see the blocks do not overlap (measured: 5.5% of a benchmark step
// scalar). HasBias is a template parameter, not a null test in the loop, for the same reason.
template <bool HasBias, class T>
void cell_forward_row(int64_t hidden, const T* __restrict zi, const T* __restrict zf, const T* __restrict zg,
                      const T* __restrict zo, const T* __restrict bi, const T* __restrict bf, const T* __restrict bg,
                      const T* __restrict bo, const T* __restrict c_prev, T* __restrict gi, T* __restrict gf,
                      T* __restrict gg, T* __restrict go, T* __restrict c, T* __restrict h) {
  // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
  for (int64_t j = 0; j < hidden; ++j) {
    const T i = act_sigmoid(HasBias ? zi[j] + bi[j] : zi[j]);
    const T f = act_sigmoid(HasBias ? zf[j] + bf[j] : zf[j]);
    const T g = act_tanh(HasBias ? zg[j] + bg[j] : zg[j]);
    const T o = act_sigmoid(HasBias ? zo[j] + bo[j] : zo[j]);
    gi[j] = i;
    gf[j] = f;
    gg[j] = g;
    go[j] = o;
    const T cv = f * c_prev[j] + i * g;
    const T tc = act_tanh(cv);
    c[j] = cv;
    h[j] = o * tc;
  }
}

// The common case (dh, dc and dc_prev all present). Accumulate is a template parameter because a run-time
// `accumulate ? dc_prev[j] : 0` inside the loop is a conditional load, and GCC then leaves the whole loop
// scalar (measured: 2.8% of a benchmark step on AVX2, about 4x the vectorised loop).
template <bool Accumulate, class T>
void cell_backward_row_full(int64_t hidden, const T* __restrict gi, const T* __restrict gf, const T* __restrict gg,
                            const T* __restrict go, const T* __restrict c_prev, const T* __restrict c,
                            const T* __restrict dh, const T* __restrict dc, T* __restrict dzi, T* __restrict dzf,
                            T* __restrict dzg, T* __restrict dzo, T* __restrict dc_prev) {
  // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
  for (int64_t j = 0; j < hidden; ++j) {
    const T i = gi[j], f = gf[j], g = gg[j], o = go[j];
    const T tc = act_tanh(c[j]);
    const T dct = dc[j] + dh[j] * o * (T(1) - tc * tc);
    dzi[j] = dct * g * i * (T(1) - i);
    dzf[j] = dct * c_prev[j] * f * (T(1) - f);
    dzg[j] = dct * i * (T(1) - g * g);
    dzo[j] = dh[j] * tc * o * (T(1) - o);
    // Overwriting writes 0 + x: the bits of zero-filling dc_prev first and accumulating (-0 becomes +0).
    dc_prev[j] = (Accumulate ? dc_prev[j] : T(0)) + dct * f;
  }
}

template <class T>
void cell_backward_row(int64_t hidden, const T* __restrict gi, const T* __restrict gf, const T* __restrict gg,
                       const T* __restrict go, const T* __restrict c_prev, const T* __restrict c,
                       const T* __restrict dh, const T* __restrict dc, T* __restrict dzi, T* __restrict dzf,
                       T* __restrict dzg, T* __restrict dzo, T* __restrict dc_prev, bool accumulate) {
  if (dh && dc && dc_prev) {  // the common case, without the null checks that keep the loop scalar
    if (accumulate)
      cell_backward_row_full<true>(hidden, gi, gf, gg, go, c_prev, c, dh, dc, dzi, dzf, dzg, dzo, dc_prev);
    else
      cell_backward_row_full<false>(hidden, gi, gf, gg, go, c_prev, c, dh, dc, dzi, dzf, dzg, dzo, dc_prev);
    return;
  }
  for (int64_t j = 0; j < hidden; ++j) {
    const T i = gi[j], f = gf[j], g = gg[j], o = go[j];
    const T tc = act_tanh(c[j]);
    const T dhk = dh ? dh[j] : T(0);
    // dc total = incoming dc + dh * o * (1 - tanh(c)^2)
    const T dct = (dc ? dc[j] : T(0)) + dhk * o * (T(1) - tc * tc);
    dzi[j] = dct * g * i * (T(1) - i);
    dzf[j] = dct * c_prev[j] * f * (T(1) - f);
    dzg[j] = dct * i * (T(1) - g * g);
    dzo[j] = dhk * tc * o * (T(1) - o);
    if (dc_prev) dc_prev[j] = (accumulate ? dc_prev[j] : T(0)) + dct * f;
  }
}

}  // namespace

template <class T>
void lstm_cell_forward(int64_t batch, int64_t hidden, const T* z, const T* c_prev, T* gates, T* c, T* h,
                       const T* bias) {
  parallel_ranges(batch, batch * hidden > kParallelGrain / 4, [=](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      const T* zb = z + b * 4 * hidden;
      T* gb = gates + b * 4 * hidden;
      const int64_t k = b * hidden;
      // Without a bias the bias blocks are never read; z's own blocks stand in for them.
      const T* bb = bias ? bias : zb;
      auto row = [&](auto has_bias) {
        cell_forward_row<decltype(has_bias)::value>(hidden, zb, zb + hidden, zb + 2 * hidden, zb + 3 * hidden, bb,
                                                    bb + hidden, bb + 2 * hidden, bb + 3 * hidden, c_prev + k, gb,
                                                    gb + hidden, gb + 2 * hidden, gb + 3 * hidden, c + k, h + k);
      };
      if (bias)
        row(std::true_type{});
      else
        row(std::false_type{});
    }
  });
}

template <class T>
void lstm_cell_backward(int64_t batch, int64_t hidden, const T* gates, const T* c_prev, const T* c, const T* dh,
                        const T* dc, T* dz, T* dc_prev, bool accumulate_dc_prev) {
  parallel_ranges(batch, batch * hidden > kParallelGrain / 4, [=](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      const T* gb = gates + b * 4 * hidden;
      T* dzb = dz + b * 4 * hidden;
      const int64_t k = b * hidden;
      cell_backward_row(hidden, gb, gb + hidden, gb + 2 * hidden, gb + 3 * hidden, c_prev + k, c + k,
                        dh ? dh + k : nullptr, dc ? dc + k : nullptr, dzb, dzb + hidden, dzb + 2 * hidden,
                        dzb + 3 * hidden, dc_prev ? dc_prev + k : nullptr, accumulate_dc_prev);
    }
  });
}

}  // namespace luong::cpu::LUONG_CPU_ISA
