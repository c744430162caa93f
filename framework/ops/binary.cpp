// add, sub, mul, div with broadcasting over leading dims: one operand's shape must equal the other's or be
// a suffix of it, e.g. (T, B, H) + (H). The broadcast operand's gradient is summed over the repeated rows.
#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"

namespace luong {
namespace {

const char* binary_name(BinaryKind k) {
  switch (k) {
    case BinaryKind::add: return "add";
    case BinaryKind::sub: return "sub";
    case BinaryKind::mul: return "mul";
    case BinaryKind::div: return "div";
  }
  return "?";
}

bool is_suffix(const Shape& small, const Shape& big) {
  if (small.size() > big.size()) return false;
  return std::equal(small.rbegin(), small.rend(), big.rbegin());
}

// Applies a binary kernel on tensors (out has the larger shape).
Tensor apply(BinaryKind k, const Tensor& a, const Tensor& b, const Shape& out_shape) {
  Tensor out = Tensor::empty(out_shape, a.dtype(), a.device());
  dispatch_float(a.dtype(), binary_name(k), [&](auto t) {
    using T = decltype(t);
    LUONG_KERNEL(a.device(), binary_forward<T>, k, out.numel(), a.numel(), a.data<T>(), b.numel(), b.data<T>(),
                 out.data<T>());
  });
  return out;
}

// Adds g (out_shape), summed over the leading dimensions the operand was broadcast along, into its slot.
void reduce_rows_into(const Tensor& g, Tensor& slot) {
  dispatch_float(g.dtype(), "broadcast backward", [&](auto t) {
    using T = decltype(t);
    LUONG_KERNEL(g.device(), sum_rows_accumulate<T>, g.numel() / slot.numel(), slot.numel(), g.data<T>(),
                 slot.data<T>());
  });
}

struct BinaryOp : Node {
  BinaryKind kind = BinaryKind::add;
  Tensor a, b;  // saved only for mul and div
  const char* name() const override { return binary_name(kind); }

  static Variable forward(BinaryKind k, const Variable& x, const Variable& y) {
    const char* op = binary_name(k);
    LUONG_CHECK(x.dtype() == y.dtype(), op, ": dtype mismatch ", x.dtype(), " vs ", y.dtype());
    check_same_device(op, x.data(), y.data());
    const bool y_fits = is_suffix(y.shape(), x.shape()), x_fits = is_suffix(x.shape(), y.shape());
    LUONG_CHECK(y_fits || x_fits, op, ": shapes ", shape_str(x.shape()), " and ", shape_str(y.shape()),
                " do not broadcast (one must be a suffix of the other)");
    const Shape out_shape = y_fits ? x.shape() : y.shape();
    auto node = std::make_shared<BinaryOp>();
    node->kind = k;
    if (k == BinaryKind::mul || k == BinaryKind::div) node->a = x.data(), node->b = y.data();
    return attach(node, {x, y}, apply(k, x.data(), y.data(), out_shape));
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined()) return;
    const Shape& s = g.shape();
    switch (kind) {
      case BinaryKind::add:
        if (needs_grad(0)) give(0, g, false);
        if (needs_grad(1)) give(1, g, false);
        break;
      case BinaryKind::sub:
        if (needs_grad(0)) give(0, g, false);
        if (needs_grad(1)) give(1, apply(BinaryKind::mul, g, Tensor::full({}, -1.0, g.dtype(), g.device()), s), true);
        break;
      case BinaryKind::mul:  // da = g b, db = g a
        if (needs_grad(0)) give(0, apply(BinaryKind::mul, g, b, s), true);
        if (needs_grad(1)) give(1, apply(BinaryKind::mul, g, a, s), true);
        break;
      case BinaryKind::div:  // da = g / b, db = -g a / b^2 = -(g / b) * (a / b)
        if (needs_grad(0)) give(0, apply(BinaryKind::div, g, b, s), true);
        if (needs_grad(1)) {
          Tensor q = apply(BinaryKind::div, g, b, s);
          Tensor r = apply(BinaryKind::div, a, b, s);
          Tensor prod = apply(BinaryKind::mul, q, r, s);
          give(1, apply(BinaryKind::mul, prod, Tensor::full({}, -1.0, g.dtype(), g.device()), s), true);
        }
        break;
    }
  }
  void release_saved() override { a = Tensor(), b = Tensor(); }

 private:
  // Adds g (out_shape) into input i's gradient, summed over broadcast dimensions. A same-shape gradient is
  // adopted (owned: freshly computed) or copied into an empty slot rather than added to zeros.
  void give(int i, const Tensor& g, bool owned) {
    if (g.numel() != inputs()[static_cast<size_t>(i)]->data.numel()) return reduce_rows_into(g, grad_slot(i));
    if (owned) return accumulate_grad_owned(i, Tensor(g));
    accumulate_grad(i, g);
  }
};

}  // namespace

LUONG_REGISTER_OP("add");
LUONG_REGISTER_OP("sub");
LUONG_REGISTER_OP("mul");
LUONG_REGISTER_OP("div");

Variable add(const Variable& a, const Variable& b) { return BinaryOp::forward(BinaryKind::add, a, b); }
Variable sub(const Variable& a, const Variable& b) { return BinaryOp::forward(BinaryKind::sub, a, b); }
Variable mul(const Variable& a, const Variable& b) { return BinaryOp::forward(BinaryKind::mul, a, b); }
Variable div(const Variable& a, const Variable& b) { return BinaryOp::forward(BinaryKind::div, a, b); }

}  // namespace luong
