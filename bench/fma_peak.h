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
};

// About half a second: 12 independent FMA chains on registers (enough to cover the FMA latency of every
// x86 core with two FMA pipes), on one thread and then on all, and the add chain; each the fastest of five
// short runs. On a shared host the figures still move (one thread measured 66-93 GFLOP/s within a minute
// here, at the same clock): read them as the machine's rate at the time of the measurement.
FmaPeak measure_fma_peak();

}  // namespace luong::bench
