// Embedding lookup; backward scatter-adds rows into the table's gradient in id order (deterministic).
#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"

namespace luong {
namespace {

struct EmbeddingOp : Node {
  Tensor ids;
  int64_t padding_idx = -1;
  const char* name() const override { return "embedding"; }

  static Variable forward(const Variable& weight, const Tensor& ids, int64_t padding_idx) {
    LUONG_CHECK(weight.dim() == 2, "embedding: weight must be (V, E), got ", shape_str(weight.shape()));
    LUONG_CHECK(ids.dtype() == DType::i64, "embedding: ids must be int64, got ", ids.dtype());
    check_same_device("embedding", weight.data(), ids);
    const int64_t rows = weight.size(0), dim = weight.size(1);
    Shape out_shape = ids.shape();
    out_shape.push_back(dim);
    Tensor out = Tensor::empty(out_shape, weight.dtype(), weight.device());
    const int64_t bad = dispatch_float(weight.dtype(), "embedding", [&](auto t) {
      using T = decltype(t);
      return LUONG_KERNEL(weight.device(), embedding_forward<T>, ids.numel(), dim, rows, ids.data<int64_t>(),
                          weight.data().data<T>(), out.data<T>());
    });
    LUONG_CHECK(bad < 0, "embedding: id ", ids.to_vector()[static_cast<size_t>(bad < 0 ? 0 : bad)], " at position ",
                bad, " is outside the table of ", rows, " rows");
    auto node = std::make_shared<EmbeddingOp>();
    node->ids = ids, node->padding_idx = padding_idx;
    return attach(node, {weight}, out);
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined() || !needs_grad(0)) return;
    Tensor& slot = grad_slot(0);
    dispatch_float(g.dtype(), "embedding backward", [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(g.device(), embedding_backward<T>, ids.numel(), slot.size(1), ids.data<int64_t>(), padding_idx,
                   g.data<T>(), slot.data<T>());
    });
  }
  void release_saved() override { ids = Tensor(); }
};

}  // namespace

LUONG_REGISTER_OP("embedding");

Variable embedding(const Variable& weight, const Tensor& ids, int64_t padding_idx) {
  return EmbeddingOp::forward(weight, ids, padding_idx);
}

}  // namespace luong
