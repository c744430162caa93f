// Pointwise functions: tanh, sigmoid, relu, exp, log. Backward uses the saved input or output, whichever
// the derivative is cheapest in (tanh' = 1 - y^2 needs only y).
#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"
#include "framework/ops/tensor_math.h"

namespace luong {
namespace {

const char* unary_name(UnaryKind k) {
  switch (k) {
    case UnaryKind::tanh: return "tanh";
    case UnaryKind::sigmoid: return "sigmoid";
    case UnaryKind::relu: return "relu";
    case UnaryKind::exp: return "exp";
    case UnaryKind::log: return "log";
    case UnaryKind::neg: return "neg";
    case UnaryKind::sqrt: return "sqrt";
  }
  return "?";
}

struct UnaryOp : Node {
  UnaryKind kind = UnaryKind::tanh;
  Tensor x, y;  // x for relu and log, y for the others
  const char* name() const override { return unary_name(kind); }

  static Variable forward(UnaryKind k, const Variable& in) {
    Tensor out = Tensor::empty(in.shape(), in.dtype(), in.device());
    dispatch_float(in.dtype(), unary_name(k), [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(in.device(), unary_forward<T>, k, out.numel(), in.data().data<T>(), out.data<T>());
    });
    auto node = std::make_shared<UnaryOp>();
    node->kind = k;
    if (k == UnaryKind::relu || k == UnaryKind::log) node->x = in.data();
    else node->y = out;
    return attach(node, {in}, out);
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined() || !needs_grad(0)) return;
    dispatch_float(g.dtype(), name(), [&](auto t) {
      using T = decltype(t);
      const T* px = x.defined() ? x.data<T>() : nullptr;
      const T* py = y.defined() ? y.data<T>() : nullptr;
      LUONG_KERNEL(g.device(), unary_backward<T>, kind, g.numel(), px, py, g.data<T>(), grad_slot(0).data<T>());
    });
  }
  void release_saved() override { x = Tensor(), y = Tensor(); }
};

// y = alpha * x + beta: the scalar ops.
struct AffineOp : Node {
  double alpha = 1.0;
  const char* name() const override { return alpha == 1.0 ? "add_scalar" : "mul_scalar"; }

  static Variable forward(const Variable& in, double alpha, double beta) {
    Tensor out = Tensor::empty(in.shape(), in.dtype(), in.device());
    dispatch_float(in.dtype(), "affine", [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(in.device(), affine<T>, out.numel(), in.data().data<T>(), static_cast<T>(alpha),
                   static_cast<T>(beta), out.data<T>());
    });
    auto node = std::make_shared<AffineOp>();
    node->alpha = alpha;
    return attach(node, {in}, out);
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined() || !needs_grad(0)) return;
    add_(grad_slot(0), g, alpha);
  }
};

}  // namespace

LUONG_REGISTER_OP("tanh");
LUONG_REGISTER_OP("sigmoid");
LUONG_REGISTER_OP("relu");
LUONG_REGISTER_OP("exp");
LUONG_REGISTER_OP("log");
LUONG_REGISTER_OP("add_scalar");
LUONG_REGISTER_OP("mul_scalar");

Variable tanh(const Variable& x) { return UnaryOp::forward(UnaryKind::tanh, x); }
Variable sigmoid(const Variable& x) { return UnaryOp::forward(UnaryKind::sigmoid, x); }
Variable relu(const Variable& x) { return UnaryOp::forward(UnaryKind::relu, x); }
Variable exp(const Variable& x) { return UnaryOp::forward(UnaryKind::exp, x); }
Variable log(const Variable& x) { return UnaryOp::forward(UnaryKind::log, x); }
Variable add_scalar(const Variable& x, double s) { return AffineOp::forward(x, 1.0, s); }
Variable mul_scalar(const Variable& x, double s) { return AffineOp::forward(x, s, 0.0); }

}  // namespace luong
