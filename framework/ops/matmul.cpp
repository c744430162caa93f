// matmul and bmm: forward and backward as GEMMs that accumulate straight into the gradient buffers
// (beta = 1), so no temporary is allocated for the input gradients.
#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"
#include "framework/ops/weight_gemm.h"

namespace luong {
namespace {

void check_float_pair(const char* op, const Variable& a, const Variable& b) {
  LUONG_CHECK(a.dtype() == b.dtype(), op, ": dtype mismatch ", a.dtype(), " vs ", b.dtype());
  check_same_device(op, a.data(), b.data());
}

// Each saves only the operand its backward reads: B for dA, A for dB.
void save_operands(const Variable& a, const Variable& b, Tensor& saved_a, Tensor& saved_b) {
  if (b.requires_grad()) saved_a = a.data();
  if (a.requires_grad()) saved_b = b.data();
}

struct MatmulOp : Node {
  Tensor a, b;  // the operands (see save_operands)
  int64_t m = 0, k = 0, n = 0;
  bool b_param = false;  // B is a parameter: packed once per scope (ops/weight_gemm.h)
  const char* name() const override { return "matmul"; }

  static Variable forward(const Variable& a, const Variable& b) {
    check_float_pair("matmul", a, b);
    LUONG_CHECK(a.dim() >= 1 && b.dim() == 2 && a.size(-1) == b.size(0), "matmul: cannot multiply ",
                shape_str(a.shape()), " by ", shape_str(b.shape()));
    auto node = std::make_shared<MatmulOp>();
    node->k = b.size(0), node->n = b.size(1), node->m = a.data().numel() / node->k;
    node->b_param = is_parameter_view(b);
    Shape out_shape = a.shape();
    out_shape.back() = node->n;
    Tensor out = Tensor::empty(out_shape, a.dtype(), a.device());
    dispatch_float(a.dtype(), "matmul", [&](auto t) {
      using T = decltype(t);
      weight_gemm<T>(false, node->m, node->n, node->k, a.data().data<T>(), b.data(), T(0), out.data<T>(),
                     node->b_param);
    });
    save_operands(a, b, node->a, node->b);
    return attach(node, {a, b}, out);
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined()) return;
    if (needs_grad(0))  // dA (m, k) += G (m, n) B^T
      dispatch_float(g.dtype(), "matmul backward", [&](auto t) {
        using T = decltype(t);
        bool fresh = false;
        T* da = grad_target(0, fresh).data<T>();
        weight_gemm<T>(true, m, k, n, g.data<T>(), b, T(fresh ? 0 : 1), da, b_param);
      });
    if (needs_grad(1)) accumulate_weight_grad(1, a, g);  // dB (k, n) += A^T (k, m) G (m, n)
  }
  void release_saved() override { a = Tensor(), b = Tensor(); }
};

struct BmmOp : Node {
  Tensor a, b;  // the operands (see save_operands)
  int64_t batch = 0, m = 0, k = 0, n = 0;
  bool trans_b = false;
  const char* name() const override { return "bmm"; }

  static Variable forward(const Variable& a, const Variable& b, bool trans_b) {
    check_float_pair("bmm", a, b);
    const bool ok =
        a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0) && a.size(2) == (trans_b ? b.size(2) : b.size(1));
    LUONG_CHECK(ok, "bmm: cannot multiply ", shape_str(a.shape()), " by ", shape_str(b.shape()),
                trans_b ? " (transposed)" : "");
    auto node = std::make_shared<BmmOp>();
    node->batch = a.size(0), node->m = a.size(1), node->k = a.size(2);
    node->n = trans_b ? b.size(1) : b.size(2);
    node->trans_b = trans_b;
    Tensor out = Tensor::empty({node->batch, node->m, node->n}, a.dtype(), a.device());
    dispatch_float(a.dtype(), "bmm", [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(a.device(), gemm_batched<T>, false, trans_b, node->batch, node->m, node->n, node->k, T(1),
                   a.data().data<T>(), b.data().data<T>(), T(0), out.data<T>());
    });
    save_operands(a, b, node->a, node->b);
    return attach(node, {a, b}, out);
  }

  void backward() override {
    const Tensor& g = out_grad();  // (batch, m, n)
    if (!g.defined()) return;
    dispatch_float(g.dtype(), "bmm backward", [&](auto t) {
      using T = decltype(t);
      if (needs_grad(0))  // dA (m, k) += G (m, n) op(B)^T; op(B)^T is B (n, k) when trans_b, else B^T
        LUONG_KERNEL(g.device(), gemm_batched<T>, false, !trans_b, batch, m, k, n, T(1), g.data<T>(), b.data<T>(), T(1),
                     grad_slot(0).data<T>());
      if (needs_grad(1)) {
        if (trans_b)  // dB (n, k) += G^T (n, m) A (m, k)
          LUONG_KERNEL(g.device(), gemm_batched<T>, true, false, batch, n, k, m, T(1), g.data<T>(), a.data<T>(), T(1),
                       grad_slot(1).data<T>());
        else  // dB (k, n) += A^T (k, m) G (m, n)
          LUONG_KERNEL(g.device(), gemm_batched<T>, true, false, batch, k, n, m, T(1), a.data<T>(), g.data<T>(), T(1),
                       grad_slot(1).data<T>());
      }
    });
  }
  void release_saved() override { a = Tensor(), b = Tensor(); }
};

}  // namespace

LUONG_REGISTER_OP("matmul");
LUONG_REGISTER_OP("bmm");

Variable matmul(const Variable& a, const Variable& b) { return MatmulOp::forward(a, b); }
Variable bmm(const Variable& a, const Variable& b, bool trans_b) { return BmmOp::forward(a, b, trans_b); }

}  // namespace luong
