// The CPU's float32 FMA peak, measured rather than taken from a data sheet: a VM reports a nominal clock
// (lscpu said 2.45 GHz here) that is neither the clock it runs at nor the one a vendor table assumes. The
// benchmarks read their GEMM rates against this roofline.
#pragma once

namespace luong::bench {

struct FmaPeak {
  const char* isa = "none";   // "avx512f", "avx2+fma", or "none" (no vector FMA: all rates 0)
  int threads = 0;            // OpenMP threads of the all-thread figure
  double one_thread = 0;      // GFLOP/s, one thread
  double all_threads = 0;     // GFLOP/s, every OpenMP thread at once
  double ghz = 0;             // the clock a chain of dependent integer adds (one a cycle) runs at, one thread
  // AVX512-BF16's dot product (VDPBF16PS: 32 bf16 pairs into 16 float32 sums, 64 flops), measured the same
  // way; 0 on a CPU without it. Where it beats the float32 rate a bf16 GEMM on vector registers would pay on
  // a CPU without AMX tiles; on the Emerald Rapids VM of the twentieth session it ran at half of it.
  double bf16_dot_one_thread = 0;   // GFLOP/s
  double bf16_dot_all_threads = 0;  // GFLOP/s
};

// About half a second: 12 independent FMA chains on registers (enough to cover the FMA latency of every
// x86 core with two FMA pipes), on one thread and then on all, and the add chain; each the fastest of five
// short runs. On a shared host the figures still move (one thread measured 66-93 GFLOP/s within a minute
// here, at the same clock): read them as the machine's rate at the time of the measurement.
FmaPeak measure_fma_peak();

}  // namespace luong::bench
