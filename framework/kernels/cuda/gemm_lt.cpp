#ifdef LUONG_WITH_CUDA
// Cached cublasLt plans behind gemm_ex (gemm_lt.h). A plan is keyed by everything the heuristic's choice
// depends on: transposes, sizes, leading dimensions, types, compute type and the alignment of each pointer
// (cublasLt assumes 256-byte aligned buffers unless told otherwise, and views into a tensor are often less
// aligned).
// The workspace is the one bound to the device's cuBLAS handle: both libraries queue on the same stream,
// so their uses never overlap. The heuristic is asked once per plan with the same workspace limit as
// cublasGemmEx, so the choice, and with it the summation order, stays fixed for a shape: runs repeat bitwise.
#include "framework/kernels/cuda/gemm_lt.h"

#include <cublasLt.h>

#include <array>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "framework/core/error.h"
#include "framework/kernels/cuda/runtime.h"

namespace luong::cuda {
namespace {

// One product in cuBLAS's column-major terms: D = C = alpha op_a(A) op_b(B) + beta C, op_a(A) m x k,
// op_b(B) k x n, C m x n.
struct LtGemm {
  cublasOperation_t op_a, op_b;
  int64_t m, n, k;
  const void* a;
  cudaDataType_t a_type;
  int64_t lda;
  const void* b;
  cudaDataType_t b_type;
  int64_t ldb;
  void* c;
  cudaDataType_t c_type;
  int64_t ldc;
  cublasComputeType_t compute;
};

struct PlanKey {
  int op_a, op_b;
  int64_t m, n, k, lda, ldb, ldc;
  int a_type, b_type, c_type, compute;
  int align_a, align_b, align_c;
  bool operator==(const PlanKey&) const = default;
};

struct PlanKeyHash {
  size_t operator()(const PlanKey& key) const {
    const int64_t fields[] = {key.op_a,   key.op_b,   key.m,       key.n,       key.k,       key.lda,
                              key.ldb,    key.ldc,    key.a_type,  key.b_type,  key.c_type,  key.compute,
                              key.align_a, key.align_b, key.align_c};
    size_t h = 1469598103934665603ull;
    for (const int64_t f : fields) h = (h ^ static_cast<size_t>(f)) * 1099511628211ull;
    return h;
  }
};

struct Plan {
  bool usable = false;  // false: cublasLt had no algorithm; the caller falls back to cublasGemmEx
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
};

struct DeviceLt {
  cublasLtHandle_t handle = nullptr;
  std::mutex mutex;  // guards plans
  std::unordered_map<PlanKey, Plan, PlanKeyHash> plans;
};

// One per device, created on first use and never destroyed (as the device contexts, device.cpp).
DeviceLt& device_lt(int device) {
  static std::mutex creation;
  static std::array<DeviceLt*, 64> states{};
  LUONG_CHECK(device >= 0 && device < static_cast<int>(states.size()), "lt_gemm: device index ", device);
  std::lock_guard<std::mutex> lock(creation);
  DeviceLt*& s = states[static_cast<size_t>(device)];
  if (!s) {
    auto* created = new DeviceLt;
    LUONG_CUBLAS_CHECK(cublasLtCreate(&created->handle));
    s = created;
  }
  return *s;
}

// The largest power of two, up to 256, that divides the address.
int alignment_of(const void* p) {
  const auto bits = reinterpret_cast<uintptr_t>(p);
  int align = 1;
  while (align < 256 && bits % static_cast<uintptr_t>(2 * align) == 0) align *= 2;
  return align;
}

cublasLtMatrixLayout_t layout(cudaDataType_t type, cublasOperation_t op, int64_t rows_op, int64_t cols_op, int64_t ld) {
  // The layout describes the matrix as stored, before op.
  const bool t = op != CUBLAS_OP_N;
  cublasLtMatrixLayout_t l = nullptr;
  LUONG_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, static_cast<uint64_t>(t ? cols_op : rows_op),
                                                static_cast<uint64_t>(t ? rows_op : cols_op), ld));
  return l;
}

Plan make_plan(cublasLtHandle_t handle, const LtGemm& g, const PlanKey& key, size_t workspace_bytes) {
  Plan p;
  LUONG_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p.desc, g.compute, CUDA_R_32F));
  LUONG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &g.op_a, sizeof g.op_a));
  LUONG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &g.op_b, sizeof g.op_b));
  p.a = layout(g.a_type, g.op_a, g.m, g.k, g.lda);
  p.b = layout(g.b_type, g.op_b, g.k, g.n, g.ldb);
  p.c = layout(g.c_type, CUBLAS_OP_N, g.m, g.n, g.ldc);

  cublasLtMatmulPreference_t pref = nullptr;
  LUONG_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t workspace = workspace_bytes;
  LUONG_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                          sizeof workspace));
  // D is C (the product is in place), so it shares C's alignment.
  const std::pair<cublasLtMatmulPreferenceAttributes_t, int> aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.align_c},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.align_c}};
  for (const auto& [attr, bytes] : aligns) {
    const uint32_t value = static_cast<uint32_t>(bytes);
    LUONG_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof value));
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(handle, p.desc, p.a, p.b, p.c, p.c, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s == CUBLAS_STATUS_SUCCESS && found > 0 && result.state == CUBLAS_STATUS_SUCCESS) {
    p.algo = result.algo;
    p.usable = true;
  }
  return p;
}

// Runs g through its cached plan and returns true, or returns false (having done nothing) when cublasLt has
// no algorithm for it.
bool lt_gemm(const LtGemm& g, float alpha, float beta) {
  DeviceContext& ctx = context();
  DeviceLt& lt = device_lt(ctx.device);
  const PlanKey key{static_cast<int>(g.op_a), static_cast<int>(g.op_b), g.m, g.n, g.k, g.lda, g.ldb, g.ldc,
                    static_cast<int>(g.a_type), static_cast<int>(g.b_type), static_cast<int>(g.c_type),
                    static_cast<int>(g.compute), alignment_of(g.a), alignment_of(g.b), alignment_of(g.c)};
  const Plan* plan = nullptr;
  {
    std::lock_guard<std::mutex> lock(lt.mutex);
    auto it = lt.plans.find(key);
    if (it == lt.plans.end()) it = lt.plans.emplace(key, make_plan(lt.handle, g, key, ctx.blas_workspace_bytes)).first;
    plan = &it->second;  // unordered_map nodes stay put; plans are never erased
  }
  if (!plan->usable) return false;
  LUONG_CUBLAS_CHECK(cublasLtMatmul(lt.handle, plan->desc, &alpha, g.a, plan->a, g.b, plan->b, &beta, g.c, plan->c,
                                    g.c, plan->c, &plan->algo, ctx.blas_workspace, ctx.blas_workspace_bytes,
                                    ctx.stream));
  return true;
}

}  // namespace

void gemm_ex(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const void* a, const void* b,
             cudaDataType_t ab_type, float beta, void* c, cudaDataType_t c_type, cublasComputeType_t compute) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: B first, m and n swapped.
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
  const LtGemm g{op_b, op_a, n, m, k, b, ab_type, ldb, a, ab_type, lda, c, c_type, n, compute};
  if (lt_gemm(g, alpha, beta)) return;
  LUONG_CUBLAS_CHECK(cublasGemmEx_64(cublas_handle(), op_b, op_a, n, m, k, &alpha, b, ab_type, ldb, a, ab_type, lda,
                                     &beta, c, c_type, n, compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace luong::cuda
#endif  // LUONG_WITH_CUDA
