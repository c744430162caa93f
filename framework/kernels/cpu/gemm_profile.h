// Where a CPU step's GEMM time goes, product by product. With LUONG_PROFILE=1 in the environment (which also
// turns on the kernel profile, kernels/kernel_profile.h) every float32 product that reaches a CPU GEMM entry
// point (gemm, gemm_batched, gemm_tn_pieces and weight_gemm's packed paths) is timed, keyed by the kernel that
// ran it and its shape; at exit the process prints one Markdown table to stderr (calls, total ms, GFLOP/s per
// kernel and shape, largest total first). The kernel profile has one "gemm" row for all of them; this table
// says which products hold that time and at what rate (docs/PERFORMANCE.md, seventeenth session).
//
// Off (the default) it costs one relaxed atomic load per product. On, a clock read on each side of the call
// and a locked map update: about a microsecond, so tiny products read slower than they run. CPU only: a CUDA
// GEMM returns before the device has run it, so timing it on the host would measure the launch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace luong::cpu {

bool gemm_profile_enabled();
// Returns the previous setting (tests; the environment sets it at start-up).
bool set_gemm_profile_enabled(bool on);

struct GemmProfileRow {
  std::string kernel;  // e.g. "luong blocked", "OpenBLAS", "AMX bf16", "AMX bf16, packed weight"
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t calls = 0;
  double seconds = 0.0;
};

// The rows so far, largest total time first; and a reset (tests, or a caller profiling one window).
std::vector<GemmProfileRow> gemm_profile_rows();
void reset_gemm_profile();
// The table printed at exit: one row per kernel and shape, GFLOP/s = 2 m n k calls / seconds.
std::string gemm_profile_table();

// Times one product for the profile when the profile is on. `kernel` is a string literal naming the kernel that
// runs it; null also means "do not time" (gemm() names its route only when the profile is on, so an unprofiled
// call decides nothing extra).
class GemmProfileScope {
 public:
  GemmProfileScope(const char* kernel, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k);
  ~GemmProfileScope();
  GemmProfileScope(const GemmProfileScope&) = delete;
  GemmProfileScope& operator=(const GemmProfileScope&) = delete;

 private:
  const char* kernel_;
  bool trans_a_, trans_b_;
  int64_t m_, n_, k_;
  int64_t start_ns_;  // -1 when not timing
};

}  // namespace luong::cpu
