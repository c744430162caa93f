// y = mask ? value : x. The mask is uint8 with x's shape or a suffix of it.
#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"

namespace luong {
namespace {

struct MaskedFillOp : Node {
  Tensor mask;
  const char* name() const override { return "masked_fill"; }

  static Variable forward(const Variable& x, const Tensor& mask, double value) {
    LUONG_CHECK(mask.dtype() == DType::u8, "masked_fill: mask must be uint8, got ", mask.dtype());
    const Shape& xs = x.shape();
    const Shape& ms = mask.shape();
    LUONG_CHECK(ms.size() <= xs.size() && std::equal(ms.rbegin(), ms.rend(), xs.rbegin()) && mask.numel() > 0,
                "masked_fill: mask ", shape_str(ms), " does not broadcast to ", shape_str(xs));
    check_same_device("masked_fill", x.data(), mask);
    Tensor out = Tensor::empty(xs, x.dtype(), x.device());
    dispatch_float(x.dtype(), "masked_fill", [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(x.device(), masked_fill<T>, out.numel(), x.data().data<T>(), mask.numel(), mask.data<uint8_t>(),
                   static_cast<T>(value), out.data<T>());
    });
    auto node = std::make_shared<MaskedFillOp>();
    node->mask = mask;
    return attach(node, {x}, out);
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined() || !needs_grad(0)) return;
    dispatch_float(g.dtype(), "masked_fill backward", [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(g.device(), masked_fill_backward<T>, g.numel(), g.data<T>(), mask.numel(), mask.data<uint8_t>(),
                   grad_slot(0).data<T>());
    });
  }
  void release_saved() override { mask = Tensor(); }
};

}  // namespace

LUONG_REGISTER_OP("masked_fill");

Variable masked_fill(const Variable& x, const Tensor& mask, double value) {
  return MaskedFillOp::forward(x, mask, value);
}

}  // namespace luong
