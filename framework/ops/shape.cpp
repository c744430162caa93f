// Shape ops: slice/select, concat/split/stack, transpose, reshape. Every tensor stays contiguous, so a
// slice along dim 0 and a reshape are views; everything else is a block copy, and every backward is the
// same copy in reverse, accumulating.
#include <numeric>

#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"
#include "framework/ops/weight_gemm.h"

namespace luong {
namespace {

int64_t normalize_dim(const char* op, int64_t dim, int64_t ndim) {
  const int64_t d = dim < 0 ? dim + ndim : dim;
  LUONG_CHECK(d >= 0 && d < ndim, op, ": dim ", dim, " out of range for a ", ndim, "-d tensor");
  return d;
}

// Copies the middle-dim range of a (outer, src_len, inner) tensor into (outer, dst_len, inner) at dst_start.
void block_copy(const Tensor& src, int64_t src_len, int64_t src_start, Tensor& dst, int64_t dst_len, int64_t dst_start,
                int64_t outer, int64_t len, int64_t inner, bool accumulate) {
  dispatch_float(src.dtype(), "block copy", [&](auto t) {
    using T = decltype(t);
    LUONG_KERNEL(src.device(), copy_block<T>, outer, inner, len, src.data<T>(), src_len, src_start, dst.data<T>(),
                 dst_len, dst_start, accumulate);
  });
}

struct SliceOp : Node {
  int64_t outer = 0, inner = 0, src_len = 0, start = 0, len = 0;
  const char* name() const override { return "slice"; }

  static Variable forward(const Variable& x, int64_t dim, int64_t start, int64_t length) {
    const int64_t d = normalize_dim("slice", dim, x.dim());
    LUONG_CHECK(start >= 0 && length >= 0 && start + length <= x.size(d), "slice: [", start, ", ", start + length,
                ") out of range for dim ", d, " of ", shape_str(x.shape()));
    auto node = std::make_shared<SliceOp>();
    node->outer = shape_prod(x.shape(), 0, static_cast<size_t>(d));
    node->inner = shape_prod(x.shape(), static_cast<size_t>(d) + 1, x.shape().size());
    node->src_len = x.size(d), node->start = start, node->len = length;
    Shape out_shape = x.shape();
    out_shape[static_cast<size_t>(d)] = length;
    Tensor out;
    if (node->outer == 1) {  // contiguous range: a view
      out = x.data().view({x.data().numel()}).narrow(start * node->inner, length * node->inner).view(out_shape);
    } else {
      out = Tensor::empty(out_shape, x.dtype(), x.device());
      block_copy(x.data(), node->src_len, start, out, length, 0, node->outer, length, node->inner, false);
    }
    return mark_parameter_view(x, attach(node, {x}, out));
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined() || !needs_grad(0)) return;
    block_copy(g, len, 0, grad_slot(0), src_len, start, outer, len, inner, true);
  }
};

struct ConcatOp : Node {
  int64_t outer = 0, inner = 0, total = 0;
  std::vector<int64_t> lens;
  const char* name() const override { return "concat"; }

  static Variable forward(const std::vector<Variable>& xs, int64_t dim) {
    LUONG_CHECK(!xs.empty(), "concat: no inputs");
    const int64_t d = normalize_dim("concat", dim, xs[0].dim());
    auto node = std::make_shared<ConcatOp>();
    Shape out_shape = xs[0].shape();
    node->outer = shape_prod(out_shape, 0, static_cast<size_t>(d));
    node->inner = shape_prod(out_shape, static_cast<size_t>(d) + 1, out_shape.size());
    for (const auto& x : xs) {
      Shape a = x.shape(), b = xs[0].shape();
      LUONG_CHECK(a.size() == b.size() && x.dtype() == xs[0].dtype(), "concat: cannot join ", shape_str(a), " with ",
                  shape_str(b));
      a[static_cast<size_t>(d)] = b[static_cast<size_t>(d)] = 0;
      LUONG_CHECK(a == b, "concat: shapes ", shape_str(x.shape()), " and ", shape_str(xs[0].shape()),
                  " differ outside dim ", d);
      node->lens.push_back(x.size(d));
    }
    node->total = std::accumulate(node->lens.begin(), node->lens.end(), int64_t{0});
    out_shape[static_cast<size_t>(d)] = node->total;
    Tensor out = Tensor::empty(out_shape, xs[0].dtype(), xs[0].device());
    int64_t off = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      block_copy(xs[i].data(), node->lens[i], 0, out, node->total, off, node->outer, node->lens[i], node->inner, false);
      off += node->lens[i];
    }
    return attach(node, xs, out);
  }

  // Input i's gradient is its range of g. Along dim 0 (stack, and the decoder's per-step outputs) that range
  // is contiguous and is handed over as a view (borrowed, no copy); otherwise it is copied into the gradient
  // buffer, overwriting a fresh one instead of adding to a zero-filled one.
  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined()) return;
    int64_t off = 0;
    for (size_t i = 0; i < lens.size(); ++i) {
      const int input = static_cast<int>(i);
      if (needs_grad(input) && outer == 1) {
        accumulate_grad(input, g.view({g.numel()}).narrow(off * inner, lens[i] * inner));
      } else if (needs_grad(input)) {
        bool fresh = false;
        Tensor& target = grad_target(input, fresh);
        block_copy(g, total, off, target, lens[i], 0, outer, lens[i], inner, !fresh);
      }
      off += lens[i];
    }
  }
};

struct TransposeOp : Node {
  int64_t outer = 0, a = 0, mid = 0, b = 0, inner = 0;
  const char* name() const override { return "transpose"; }

  static Variable forward(const Variable& x, int64_t d0, int64_t d1) {
    d0 = normalize_dim("transpose", d0, x.dim());
    d1 = normalize_dim("transpose", d1, x.dim());
    if (d0 > d1) std::swap(d0, d1);
    auto node = std::make_shared<TransposeOp>();
    const Shape& s = x.shape();
    node->outer = shape_prod(s, 0, static_cast<size_t>(d0));
    node->a = s[static_cast<size_t>(d0)];
    node->mid = shape_prod(s, static_cast<size_t>(d0) + 1, static_cast<size_t>(d1));
    node->b = s[static_cast<size_t>(d1)];
    node->inner = shape_prod(s, static_cast<size_t>(d1) + 1, s.size());
    Shape out_shape = s;
    std::swap(out_shape[static_cast<size_t>(d0)], out_shape[static_cast<size_t>(d1)]);
    Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
    node->run(x.data(), out, false, false);
    return attach(node, {x}, out);
  }

  void run(const Tensor& src, Tensor& dst, bool reverse, bool accumulate) const {
    dispatch_float(src.dtype(), "transpose", [&](auto t) {
      using T = decltype(t);
      LUONG_KERNEL(src.device(), transpose<T>, outer, reverse ? b : a, mid, reverse ? a : b, inner, src.data<T>(),
                   dst.data<T>(), accumulate);
    });
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined() || !needs_grad(0)) return;
    run(g, grad_slot(0), true, true);
  }
};

struct ReshapeOp : Node {
  const char* name() const override { return "reshape"; }

  static Variable forward(const Variable& x, const Shape& shape) {
    return mark_parameter_view(x, attach(std::make_shared<ReshapeOp>(), {x}, x.data().view(shape)));
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined() || !needs_grad(0)) return;
    accumulate_grad(0, g);
  }
};

}  // namespace

LUONG_REGISTER_OP("slice");
LUONG_REGISTER_OP("concat");
LUONG_REGISTER_OP("transpose");
LUONG_REGISTER_OP("reshape");

Variable slice(const Variable& x, int64_t dim, int64_t start, int64_t length) {
  return SliceOp::forward(x, dim, start, length);
}

Variable select(const Variable& x, int64_t dim, int64_t index) {
  const int64_t d = normalize_dim("select", dim, x.dim());
  Shape out_shape = x.shape();
  out_shape.erase(out_shape.begin() + d);
  return reshape(slice(x, d, index, 1), out_shape);
}

Variable concat(const std::vector<Variable>& xs, int64_t dim) { return ConcatOp::forward(xs, dim); }

std::vector<Variable> split(const Variable& x, const std::vector<int64_t>& sizes, int64_t dim) {
  const int64_t d = normalize_dim("split", dim, x.dim());
  const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  LUONG_CHECK(total == x.size(d), "split: sizes add up to ", total, " but dim ", d, " of ", shape_str(x.shape()),
              " is ", x.size(d));
  std::vector<Variable> out;
  int64_t off = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, d, off, s));
    off += s;
  }
  return out;
}

Variable stack(const std::vector<Variable>& xs) {
  LUONG_CHECK(!xs.empty(), "stack: no inputs");
  std::vector<Variable> parts;
  parts.reserve(xs.size());
  for (const auto& x : xs) {
    LUONG_CHECK(x.shape() == xs[0].shape(), "stack: shapes ", shape_str(x.shape()), " and ", shape_str(xs[0].shape()),
                " differ");
    Shape s = x.shape();
    s.insert(s.begin(), 1);
    parts.push_back(reshape(x, s));
  }
  return concat(parts, 0);
}

Variable transpose(const Variable& x, int64_t dim0, int64_t dim1) { return TransposeOp::forward(x, dim0, dim1); }
Variable reshape(const Variable& x, const Shape& shape) { return ReshapeOp::forward(x, shape); }

}  // namespace luong
