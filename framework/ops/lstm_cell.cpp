// The fused LSTM cell: the two GEMMs accumulate into one (B, 4H) pre-activation buffer, then one pointwise
// kernel computes all gates, c and h. Backward is the mirror: one pointwise kernel gives dz, then GEMMs
// give dx, dh_prev, dW, dU and a row sum gives db.
#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"
#include "framework/ops/weight_gemm.h"

namespace luong {
namespace {

struct LstmCellOp : Node {
  // Saved for backward.
  Tensor x, h_prev, c_prev;  // (B, I or 4H), (B, H), (B, H)
  Tensor gates;              // (B, 4H) activated i, f, g, o
  Tensor c;                  // (B, H) the cell state after the step (backward recomputes tanh(c) from it)
  Tensor W, U;               // (I, 4H) [may be undefined], (H, 4H)
  int64_t batch = 0, hidden = 0, in_dim = 0;
  bool has_w = false;
  bool w_param = false, u_param = false;  // W, U are parameters: packed once per scope (ops/weight_gemm.h)
  const char* name() const override { return "lstm_cell"; }

  // Input order: x, h_prev, c_prev, [W], U, b.
  int u_index() const { return has_w ? 4 : 3; }

  static LstmState forward(const Variable& xv, const LstmState& prev, const Variable& Wv, const Variable& Uv,
                           const Variable& bv) {
    auto n = std::make_shared<LstmCellOp>();
    n->has_w = Wv.defined();
    n->w_param = n->has_w && is_parameter_view(Wv), n->u_param = is_parameter_view(Uv);
    n->batch = xv.size(0), n->hidden = Uv.size(0), n->in_dim = xv.size(1);
    const int64_t B = n->batch, H = n->hidden, G = 4 * H;
    const bool shapes_ok = xv.dim() == 2 && prev.h.shape() == Shape{B, H} && prev.c.shape() == Shape{B, H} &&
                           Uv.shape() == Shape{H, G} && bv.shape() == Shape{G} &&
                           (n->has_w ? Wv.shape() == Shape{n->in_dim, G} : n->in_dim == G);
    LUONG_CHECK(shapes_ok, "lstm_cell: inconsistent shapes x ", shape_str(xv.shape()), ", h ",
                shape_str(prev.h.shape()), ", c ", shape_str(prev.c.shape()), ", W ",
                n->has_w ? shape_str(Wv.shape()) : std::string("(none)"), ", U ", shape_str(Uv.shape()), ", b ",
                shape_str(bv.shape()));
    const Device dev = xv.device();
    Tensor z = Tensor::empty({B, G}, xv.dtype(), dev);
    n->gates = Tensor::empty({B, G}, xv.dtype(), dev);
    Tensor h = Tensor::empty({B, H}, xv.dtype(), dev), c = Tensor::empty({B, H}, xv.dtype(), dev);
    dispatch_float(xv.dtype(), "lstm_cell", [&](auto t) {
      using T = decltype(t);
      T* pz = z.data<T>();
      if (n->has_w) {  // z = x W; the bias is added by the cell kernel (no fill and broadcast add first)
        weight_gemm<T>(false, B, G, n->in_dim, xv.data().data<T>(), Wv.data(), T(0), pz, n->w_param);
      } else {  // z = x + b, x already projected (the add doubles as the copy the GEMM accumulates into)
        LUONG_KERNEL(dev, binary_forward<T>, BinaryKind::add, B * G, B * G, xv.data().data<T>(), G,
                     bv.data().data<T>(), pz);
      }
      weight_gemm<T>(false, B, G, H, prev.h.data().data<T>(), Uv.data(), T(1), pz, n->u_param);
      LUONG_KERNEL(dev, lstm_cell_forward<T>, B, H, pz, prev.c.data().data<T>(), n->gates.data<T>(), c.data<T>(),
                   h.data<T>(), n->has_w ? bv.data().data<T>() : static_cast<const T*>(nullptr));
    });
    // x only feeds dW: an input already projected (no W) is not kept (the decoder's per-step projections).
    if (n->has_w && Wv.requires_grad()) n->x = xv.data();
    n->h_prev = prev.h.data(), n->c_prev = prev.c.data(), n->c = c;
    n->W = n->has_w ? Wv.data() : Tensor(), n->U = Uv.data();
    std::vector<Variable> inputs{xv, prev.h, prev.c};
    if (n->has_w) inputs.push_back(Wv);
    inputs.push_back(Uv);
    inputs.push_back(bv);
    auto outs = attach(n, std::move(inputs), {h, c});
    return {outs[0], outs[1]};
  }

  void backward() override {
    const Tensor& dh = out_grad(0);
    const Tensor& dc = out_grad(1);
    if (!dh.defined() && !dc.defined()) return;
    const int64_t B = batch, H = hidden, G = 4 * H;
    const Device dev = gates.device();
    Tensor dz = Tensor::empty({B, G}, gates.dtype(), dev);
    dispatch_float(gates.dtype(), "lstm_cell backward", [&](auto t) {
      using T = decltype(t);
      T* pdz = dz.data<T>();
      // dc_prev's slot: overwritten when fresh, as if zero-filled first (no fill), else accumulated.
      bool dc_fresh = false;
      T* dc_prev = needs_grad(2) ? grad_target(2, dc_fresh).data<T>() : nullptr;
      LUONG_KERNEL(dev, lstm_cell_backward<T>, B, H, gates.data<T>(), c_prev.data<T>(), c.data<T>(),
                   dh.defined() ? dh.data<T>() : nullptr, dc.defined() ? dc.data<T>() : nullptr, pdz, dc_prev,
                   !dc_fresh);
      bool fresh = false;
      if (needs_grad(0)) {
        if (has_w) {  // dx (B, I) += dz (B, G) W^T
          T* dx = grad_target(0, fresh).data<T>();
          weight_gemm<T>(true, B, in_dim, G, pdz, W, T(fresh ? 0 : 1), dx, w_param);
        } else {
          accumulate_grad(0, dz);  // borrowed (interior input): dz is only read from here on
        }
      }
      if (needs_grad(1)) {  // dh_prev (B, H) += dz U^T
        T* dh_prev = grad_target(1, fresh).data<T>();
        weight_gemm<T>(true, B, H, G, pdz, U, T(fresh ? 0 : 1), dh_prev, u_param);
      }
    });
    // dW (I, G) += x^T dz, dU (H, G) += h_prev^T dz and db += colsum(dz): deferred to one GEMM (one column
    // sum) over all steps when this cell runs inside a step loop (Node::accumulate_weight_grad), with dz
    // stacked once for the three; dz is not touched after this.
    if (has_w && needs_grad(3)) accumulate_weight_grad(3, x, dz);
    if (needs_grad(u_index())) accumulate_weight_grad(u_index(), h_prev, dz);
    if (needs_grad(u_index() + 1)) accumulate_bias_grad(u_index() + 1, dz);
  }
  void release_saved() override { x = h_prev = c_prev = gates = c = W = U = Tensor(); }
};

}  // namespace

LUONG_REGISTER_OP("lstm_cell");

LstmState lstm_cell(const Variable& x, const LstmState& prev, const Variable& W, const Variable& U, const Variable& b) {
  return LstmCellOp::forward(x, prev, W, U, b);
}

}  // namespace luong
