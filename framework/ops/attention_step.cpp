// attention_step: scores, masked softmax and context of one decoder step as one node (kernels
// */attention_step.*). Replaces two batched matrix-vector products, a masked softmax and four reshapes,
// each a node with its own kernels, in the decoder's step loop.
#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"

namespace luong {
namespace {

struct AttentionStepOp : Node {
  Tensor query, keys, values, weights;  // saved for backward
  int64_t batch = 0, src = 0, dim = 0;
  const char* name() const override { return "attention_step"; }

  static AttentionStep forward(const Variable& q, const Variable& k, const Variable& v, const Tensor& mask) {
    const bool shapes_ok = q.dim() == 2 && k.dim() == 3 && k.shape() == v.shape() && k.size(0) == q.size(0) &&
                           k.size(2) == q.size(1);
    LUONG_CHECK(shapes_ok, "attention_step: query ", shape_str(q.shape()), ", keys ", shape_str(k.shape()),
                ", values ", shape_str(v.shape()), " are not (B, H), (B, S, H), (B, S, H)");
    LUONG_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(), "attention_step: dtypes differ: ", q.dtype(), ", ",
                k.dtype(), ", ", v.dtype());
    check_same_device("attention_step", q.data(), k.data());
    check_same_device("attention_step", q.data(), v.data());
    auto n = std::make_shared<AttentionStepOp>();
    n->batch = k.size(0), n->src = k.size(1), n->dim = k.size(2);
    if (mask.defined()) {
      LUONG_CHECK(mask.dtype() == DType::u8 && mask.shape() == Shape({n->batch, n->src}),
                  "attention_step: mask must be uint8 (", n->batch, ", ", n->src, "), got ", mask.describe());
      check_same_device("attention_step", q.data(), mask);
    }
    const Device dev = q.device();
    Tensor context = Tensor::empty({n->batch, n->dim}, q.dtype(), dev);
    Tensor weights = Tensor::empty({n->batch, n->src}, q.dtype(), dev);
    dispatch_float(q.dtype(), "attention_step", [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(dev, attention_step_forward<T>, n->batch, n->src, n->dim, q.data().data<T>(), k.data().data<T>(),
                   v.data().data<T>(), mask.defined() ? mask.data<uint8_t>() : nullptr, weights.data<T>(),
                   context.data<T>());
    });
    n->query = q.data(), n->keys = k.data(), n->values = v.data(), n->weights = weights;
    auto outs = attach(n, {q, k, v}, {context, weights});
    return {outs[0], outs[1]};
  }

  void backward() override {
    const Tensor& gc = out_grad(0);
    const Tensor& gw = out_grad(1);
    if (!gc.defined() && !gw.defined()) return;
    const Device dev = weights.device();
    dispatch_float(weights.dtype(), "attention_step backward", [&](auto t) {
      using T = decltype(t);
      // With keys and values the same variable both slots are one buffer; the kernels allow that.
      T* dq = needs_grad(0) ? grad_slot(0).data<T>() : nullptr;
      T* dk = needs_grad(1) ? grad_slot(1).data<T>() : nullptr;
      T* dv = needs_grad(2) ? grad_slot(2).data<T>() : nullptr;
      LUONG_KERNEL(dev, attention_step_backward<T>, batch, src, dim, query.data<T>(), keys.data<T>(), values.data<T>(),
                   weights.data<T>(), gc.defined() ? gc.data<T>() : nullptr, gw.defined() ? gw.data<T>() : nullptr, dq,
                   dk, dv);
    });
  }
  void release_saved() override { query = keys = values = weights = Tensor(); }
};

}  // namespace

LUONG_REGISTER_OP("attention_step");

AttentionStep attention_step(const Variable& query, const Variable& keys, const Variable& values, const Tensor& mask) {
  return AttentionStepOp::forward(query, keys, values, mask);
}

}  // namespace luong
