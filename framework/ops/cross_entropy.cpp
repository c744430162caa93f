// Fused log-softmax + cross-entropy. Returns the summed loss and the token count so that averaging is
// token-weighted across batches and ranks. The log-probabilities are kept for backward; probabilities are
// never materialised separately.
#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/loss_targets.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"
#include "framework/ops/tensor_math.h"

namespace luong {
namespace {

struct CrossEntropyOp : Node {
  Tensor logp, targets;
  int64_t ignore_index = -100;
  double eps = 0.0;
  const char* name() const override { return "cross_entropy"; }

  static CrossEntropy forward(const Variable& logits, const Tensor& targets, int64_t ignore_index, double eps) {
    LUONG_CHECK(logits.dim() == 2, "cross_entropy: logits must be (N, V), got ", shape_str(logits.shape()));
    const int64_t rows = logits.size(0), cols = logits.size(1);
    const int64_t tokens = check_loss_targets("cross_entropy", targets, rows, cols, ignore_index, eps);
    auto node = std::make_shared<CrossEntropyOp>();
    node->logp = Tensor::empty(logits.shape(), logits.dtype(), logits.device());
    node->targets = targets, node->ignore_index = ignore_index, node->eps = eps;
    Tensor row_loss = Tensor::empty({rows}, logits.dtype(), logits.device());
    dispatch_float(logits.dtype(), "cross_entropy", [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(logits.device(), cross_entropy_forward<T>, rows, cols, logits.data().data<T>(),
                   targets.data<int64_t>(), ignore_index, static_cast<T>(eps), node->logp.data<T>(),
                   row_loss.data<T>());
    });
    Tensor total = sum_all_scalar(row_loss);  // stays on the device
    return {attach(node, {logits}, total), tokens, row_loss};
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined() || !needs_grad(0)) return;
    const double gv = out_grad_is_one() ? 1.0 : g.item();  // no read back for the usual seed
    const int64_t rows = logp.size(0), cols = logp.size(1);
    dispatch_float(logp.dtype(), "cross_entropy backward", [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(logp.device(), cross_entropy_backward<T>, rows, cols, logp.data<T>(), targets.data<int64_t>(),
                   ignore_index, static_cast<T>(eps), static_cast<T>(gv), grad_slot(0).data<T>());
    });
  }
  void release_saved() override { logp = Tensor(), targets = Tensor(); }
};

}  // namespace

LUONG_REGISTER_OP("cross_entropy");

CrossEntropy cross_entropy(const Variable& logits, const Tensor& targets, int64_t ignore_index,
                           double label_smoothing) {
  return CrossEntropyOp::forward(logits, targets, ignore_index, label_smoothing);
}

}  // namespace luong
