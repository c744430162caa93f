// sum (all elements or one dim) and mean. Sums are deterministic (see kernels/cpu/parallel.h).
#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"
#include "framework/ops/tensor_math.h"

namespace luong {
namespace {

struct SumAllOp : Node {
  const char* name() const override { return "sum"; }

  static Variable forward(const Variable& x) {
    Tensor out = Tensor::full({}, luong::sum_all(x.data()), x.dtype(), x.device());
    return attach(std::make_shared<SumAllOp>(), {x}, out);
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined() || !needs_grad(0)) return;
    Tensor& slot = grad_slot(0);
    add_(slot, Tensor::full(slot.shape(), g.item(), g.dtype(), g.device()));
  }
};

struct SumDimOp : Node {
  int64_t outer = 0, len = 0, inner = 0;
  const char* name() const override { return "sum_dim"; }

  static Variable forward(const Variable& x, int64_t dim) {
    const int64_t d = dim < 0 ? dim + x.dim() : dim;
    LUONG_CHECK(d >= 0 && d < x.dim(), "sum: dim ", dim, " out of range for ", shape_str(x.shape()));
    auto node = std::make_shared<SumDimOp>();
    node->outer = shape_prod(x.shape(), 0, static_cast<size_t>(d));
    node->len = x.size(d);
    node->inner = shape_prod(x.shape(), static_cast<size_t>(d) + 1, x.shape().size());
    Shape out_shape = x.shape();
    out_shape.erase(out_shape.begin() + d);
    Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
    dispatch_float(x.dtype(), "sum", [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(x.device(), sum_dim<T>, node->outer, node->len, node->inner, x.data().data<T>(), out.data<T>());
    });
    return attach(node, {x}, out);
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined() || !needs_grad(0)) return;
    dispatch_float(g.dtype(), "sum backward", [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(g.device(), sum_dim_backward<T>, outer, len, inner, g.data<T>(), grad_slot(0).data<T>());
    });
  }
};

}  // namespace

LUONG_REGISTER_OP("sum");
LUONG_REGISTER_OP("sum_dim");
LUONG_REGISTER_OP("mean");

Variable sum(const Variable& x) { return SumAllOp::forward(x); }
Variable sum(const Variable& x, int64_t dim) { return SumDimOp::forward(x, dim); }
Variable mean(const Variable& x) {
  LUONG_CHECK(x.data().numel() > 0, "mean of an empty tensor ", shape_str(x.shape()));
  return mul_scalar(sum(x), 1.0 / static_cast<double>(x.data().numel()));
}

}  // namespace luong
