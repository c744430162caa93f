#include "framework/core/precision.h"

#include <atomic>

#include "framework/core/error.h"

namespace luong {
namespace {

// fp32 by default: reduced precision is opt-in (train.precision), so tests comparing against float32 results
// (CPU/CUDA parity, gradient checks, bitwise resume) see full float32 GEMMs unless they ask otherwise.
std::atomic<GemmPrecision> g_precision{GemmPrecision::fp32};

}  // namespace

void set_gemm_precision(GemmPrecision p) { g_precision.store(p, std::memory_order_relaxed); }
GemmPrecision gemm_precision() { return g_precision.load(std::memory_order_relaxed); }

GemmPrecision parse_gemm_precision(const std::string& s) {
  if (s == "fp32") return GemmPrecision::fp32;
  if (s == "tf32") return GemmPrecision::tf32;
  if (s == "bf16") return GemmPrecision::bf16;
  LUONG_FAIL("unknown GEMM precision '", s, "' (valid: fp32, tf32, bf16)");
}

const char* to_string(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::fp32: return "fp32";
    case GemmPrecision::tf32: return "tf32";
    case GemmPrecision::bf16: return "bf16";
  }
  return "?";
}

}  // namespace luong
