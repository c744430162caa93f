// The shape of a GEMM test case and element access to its row-major operands, for the CPU GEMM kernels' tests
// (blocked, AMX bf16), which check every operand layout against a reference built from these.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace luong::testing {

struct GemmShape {
  bool ta, tb;  // op(A) = A^T (A stored (k, m)); op(B) = B^T (B stored (n, k))
  int64_t m, n, k;
};

// op(A)[i][p] and op(B)[p][j].
inline float op_a(const GemmShape& s, const std::vector<float>& a, int64_t i, int64_t p) {
  return a[static_cast<size_t>(s.ta ? p * s.m + i : i * s.k + p)];
}
inline float op_b(const GemmShape& s, const std::vector<float>& b, int64_t p, int64_t j) {
  return b[static_cast<size_t>(s.tb ? j * s.k + p : p * s.n + j)];
}

}  // namespace luong::testing
