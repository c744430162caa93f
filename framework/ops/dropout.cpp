// Inverted dropout with a Philox mask: element i of the draw depends only on (seed, offset, i), so the
// same generator state gives the same mask on any device and thread count, and a checkpoint that stores
// (seed, offset) resumes the exact stream.
#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"

namespace luong {
namespace {

struct DropoutOp : Node {
  Tensor mask;  // keep / (1 - p), same shape as x
  const char* name() const override { return "dropout"; }

  static Variable forward(const Variable& x, double p, Generator& gen) {
    auto node = std::make_shared<DropoutOp>();
    node->mask = Tensor::empty(x.shape(), x.dtype(), x.device());
    Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
    const uint64_t offset = gen.reserve(static_cast<uint64_t>(x.data().numel()));
    dispatch_float(x.dtype(), "dropout", [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(x.device(), dropout_mask<T>, out.numel(), static_cast<float>(p), gen.seed(), offset,
                   node->mask.data<T>());
      LUONG_KERNEL(x.device(), mul<T>, out.numel(), x.data().data<T>(), node->mask.data<T>(), out.data<T>());
    });
    return attach(node, {x}, out);
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined() || !needs_grad(0)) return;
    Tensor tmp = Tensor::empty(g.shape(), g.dtype(), g.device());
    dispatch_float(g.dtype(), "dropout backward", [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(g.device(), mul<T>, g.numel(), g.data<T>(), mask.data<T>(), tmp.data<T>());
    });
    accumulate_grad_owned(0, std::move(tmp));
  }
  void release_saved() override { mask = Tensor(); }
};

}  // namespace

LUONG_REGISTER_OP("dropout");

Variable dropout(const Variable& x, double p, Generator& gen, bool training) {
  LUONG_CHECK(p >= 0.0 && p < 1.0, "dropout: p must be in [0, 1), got ", p);
  if (!training || p == 0.0) return x;
  return DropoutOp::forward(x, p, gen);
}

}  // namespace luong
