// softmax and log_softmax over the last dim, with an optional uint8 mask (1 = keep) of the same shape.
#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"

namespace luong {
namespace {

struct SoftmaxOp : Node {
  bool log = false;
  Tensor y, mask;
  const char* name() const override { return log ? "log_softmax" : "softmax"; }

  static Variable forward(const Variable& x, const Tensor& mask, bool log) {
    const char* op = log ? "log_softmax" : "softmax";
    LUONG_CHECK(x.dim() >= 1, op, ": needs at least one dim, got ", shape_str(x.shape()));
    if (mask.defined()) {
      LUONG_CHECK(mask.dtype() == DType::u8, op, ": mask must be uint8, got ", mask.dtype());
      check_same_shape(op, x.data(), mask);
      check_same_device(op, x.data(), mask);
    }
    const int64_t cols = x.size(-1), rows = cols ? x.data().numel() / cols : 0;
    Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
    dispatch_float(x.dtype(), op, [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(x.device(), softmax_forward<T>, log, rows, cols, x.data().data<T>(),
                   mask.defined() ? mask.data<uint8_t>() : nullptr, out.data<T>());
    });
    auto node = std::make_shared<SoftmaxOp>();
    node->log = log, node->y = out, node->mask = mask;
    return attach(node, {x}, out);
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined() || !needs_grad(0)) return;
    const int64_t cols = y.size(-1), rows = cols ? y.numel() / cols : 0;
    dispatch_float(g.dtype(), name(), [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(g.device(), softmax_backward<T>, log, rows, cols, y.data<T>(), g.data<T>(),
                   mask.defined() ? mask.data<uint8_t>() : nullptr, grad_slot(0).data<T>());
    });
  }
  void release_saved() override { y = Tensor(), mask = Tensor(); }
};

}  // namespace

LUONG_REGISTER_OP("softmax");
LUONG_REGISTER_OP("log_softmax");

Variable softmax(const Variable& x, const Tensor& mask) { return SoftmaxOp::forward(x, mask, false); }
Variable log_softmax(const Variable& x, const Tensor& mask) { return SoftmaxOp::forward(x, mask, true); }

}  // namespace luong
