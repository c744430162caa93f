// The generator and its loss as one op: z = x W + b, then softmax cross-entropy, computed in ONE (N, V)
// buffer. Forward overwrites the logits with the probabilities; backward turns them into dz in place and
// runs the two GEMMs (dx = dz W^T, dW = x^T dz) and the bias column sum. Composed from matmul, add and
// cross_entropy the same step keeps three vocabulary-sized tensors alive (logits, log-probabilities,
// gradient) and makes three more passes over them; at Multi30k's 1280 x 8000 that is 82 MB and a few
// percent of the step. Equal to the composition to float rounding (tests/ops/fused_vs_composed_test.cpp).
#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/loss_targets.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"
#include "framework/ops/tensor_math.h"

namespace luong {
namespace {

struct LinearCrossEntropyOp : Node {
  Tensor probs, targets;  // (N, V) probabilities, then dz after backward; (N) ids
  int64_t ignore_index = -100;
  double eps = 0.0;
  int64_t rows = 0, in_dim = 0, vocab = 0;
  bool has_bias = false;
  const char* name() const override { return "linear_cross_entropy"; }

  static CrossEntropy forward(const Variable& x, const Variable& w, const Variable& b, const Tensor& targets,
                              int64_t ignore_index, double eps) {
    LUONG_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(0), "linear_cross_entropy: cannot multiply ",
                shape_str(x.shape()), " by ", shape_str(w.shape()));
    LUONG_CHECK(!b.defined() || b.shape() == Shape{w.size(1)}, "linear_cross_entropy: bias ",
                b.defined() ? shape_str(b.shape()) : std::string(), " does not match weight ", shape_str(w.shape()));
    LUONG_CHECK(x.dtype() == w.dtype() && (!b.defined() || b.dtype() == w.dtype()),
                "linear_cross_entropy: dtype mismatch ", x.dtype(), " vs ", w.dtype());
    check_same_device("linear_cross_entropy", x.data(), w.data());
    const int64_t rows = x.size(0), in_dim = x.size(1), vocab = w.size(1);
    const int64_t tokens = check_loss_targets("linear_cross_entropy", targets, rows, vocab, ignore_index, eps);
    auto node = std::make_shared<LinearCrossEntropyOp>();
    node->rows = rows, node->in_dim = in_dim, node->vocab = vocab, node->has_bias = b.defined();
    node->targets = targets, node->ignore_index = ignore_index, node->eps = eps;
    const Device dev = x.device();
    Tensor z = Tensor::empty({rows, vocab}, x.dtype(), dev);
    Tensor row_loss = Tensor::empty({rows}, x.dtype(), dev);
    dispatch_float(x.dtype(), "linear_cross_entropy", [&](auto t) {
      using T = decltype(t);
      T* pz = z.data<T>();
      LUONG_KERNEL(dev, gemm<T>, false, false, rows, vocab, in_dim, T(1), x.data().data<T>(), w.data().data<T>(),
                   T(0), pz);
      if (b.defined())
        LUONG_KERNEL(dev, binary_forward<T>, BinaryKind::add, rows * vocab, rows * vocab, pz, vocab,
                     b.data().data<T>(), pz);
      LUONG_KERNEL(dev, cross_entropy_inplace_forward<T>, rows, vocab, pz, targets.data<int64_t>(), ignore_index,
                   static_cast<T>(eps), row_loss.data<T>());
    });
    Tensor total = Tensor::full({}, sum_all(row_loss), x.dtype(), dev);
    std::vector<Variable> inputs{x, w};
    if (b.defined()) inputs.push_back(b);
    Variable loss = attach(node, std::move(inputs), total);
    if (!loss.is_leaf()) node->probs = std::move(z);  // kept only when backward will run
    return {loss, tokens};
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined() || !probs.defined()) return;
    const double gv = g.item();
    const Device dev = probs.device();
    dispatch_float(probs.dtype(), "linear_cross_entropy backward", [&](auto t) {
      using T = decltype(t);
      T* dz = probs.data<T>();
      LUONG_KERNEL(dev, cross_entropy_inplace_backward<T>, rows, vocab, dz, targets.data<int64_t>(), ignore_index,
                   static_cast<T>(eps), static_cast<T>(gv));
      if (needs_grad(0))  // dx (N, H) += dz (N, V) W^T
        LUONG_KERNEL(dev, gemm<T>, false, true, rows, in_dim, vocab, T(1), dz, input_data(1).data<T>(), T(1),
                     grad_slot(0).data<T>());
      if (needs_grad(1))  // dW (H, V) += x^T dz
        LUONG_KERNEL(dev, gemm<T>, true, false, in_dim, vocab, rows, T(1), input_data(0).data<T>(), dz, T(1),
                     grad_slot(1).data<T>());
      if (has_bias && needs_grad(2)) LUONG_KERNEL(dev, sum_rows_accumulate<T>, rows, vocab, dz, grad_slot(2).data<T>());
    });
  }
  void release_saved() override { probs = Tensor(), targets = Tensor(); }
};

}  // namespace

LUONG_REGISTER_OP("linear_cross_entropy");

CrossEntropy linear_cross_entropy(const Variable& x, const Variable& weight, const Variable& bias,
                                  const Tensor& targets, int64_t ignore_index, double label_smoothing) {
  return LinearCrossEntropyOp::forward(x, weight, bias, targets, ignore_index, label_smoothing);
}

}  // namespace luong
