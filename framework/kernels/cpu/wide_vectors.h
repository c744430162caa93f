// Which build of the pointwise kernels runs: the one for the baseline the library is compiled for (x86-64-v3:
// AVX2, 8 floats a vector, 16 vector registers) or one compiled for x86-64-v4 with 512-bit vectors (16 floats,
// 32 registers). The LSTM cell and the loss kernel are built both ways (lstm_cell_body.h,
// cross_entropy_body.h, each included by a baseline file and an *_avx512.cpp compiled with -march=x86-64-v4);
// the baseline file's entry points call one or the other. Both do the same operations on the same lanes, so
// they give the same bits (tests/ops/wide_vectors_test.cpp compares them).
//
// On by default where the CPU has x86-64-v4's AVX-512 subsets and is an AMD one. On Zen 5, one 256 x 8000 loss
// chunk took 0.45 ms on AVX2 against 0.28 on AVX-512 and the LSTM cell 26.9 against 13.2 us forward, 9.1 against
// 5.3 backward (64 x 256, best of many, 2 threads; docs/PERFORMANCE.md). On Intel (Emerald Rapids) a whole tree
// built for x86-64-v4 measured no faster at the step (docs/PERFORMANCE.md, twenty-second session), so Intel keeps
// the baseline unless asked.
#pragma once

namespace luong::cpu {

// The CPU and OS run x86-64-v4 code (AVX-512 F, BW, DQ, VL, with the OS saving the registers).
bool wide_vectors_supported();
// The pointwise kernels run their AVX-512 build: supported, chosen by default (AMD) or by LUONG_WIDE_VECTORS=1,
// and not turned off (LUONG_WIDE_VECTORS=0, or set_wide_vectors(false) for A/B measurements and tests).
bool wide_vectors();
// Returns the previous setting; turning it on where unsupported leaves it off.
bool set_wide_vectors(bool on);

}  // namespace luong::cpu
