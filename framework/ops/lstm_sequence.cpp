// A whole LSTM layer over a sequence as ONE node: the recurrence h_t = cell(x_t W + b + h_{t-1} U) for all
// T steps, with the input projection x W done beforehand for all steps in one GEMM (the caller's matmul).
// Against T lstm_cell nodes this saves, per layer and step, the autograd bookkeeping, the padding masks'
// arithmetic and, above all, the weight-gradient GEMMs: backward collects dz of every step in one
// (T * B, 4H) buffer and computes dU = H_prev^T dZ and db = colsum(dZ) once, with K = T * B instead of T
// GEMMs with K = B (small-K GEMMs run at a fraction of the large ones' rate). Padding: at steps t >=
// length[b] row b carries its state forward unchanged, exactly as LstmLayer's padding rule.
#include "framework/autograd/node.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"
#include "framework/ops/weight_gemm.h"

namespace luong {
namespace {

struct LstmSequenceOp : Node {
  // Saved, all indexed by processing order i (i = t forward, T - 1 - t in reverse):
  Tensor gates;   // (T, B, 4H) activated i, f, g, o
  Tensor h_all;   // (T + 1, B, H): h_all[i] is the state before step i, h_all[T] the final one
  Tensor c_all;   // (T + 1, B, H); backward recomputes tanh(c) from c_all[i + 1] rather than keep it
  Tensor keep;    // (T, B) uint8: 1 where step i is a real token of row b; undefined when nothing is padding
  Tensor U;       // (H, 4H)
  int64_t steps = 0, batch = 0, hidden = 0;
  bool reverse = false;
  bool u_param = false;  // U is a parameter: packed once for all T steps (ops/weight_gemm.h)
  const char* name() const override { return "lstm_sequence"; }

  int64_t position(int64_t i) const { return reverse ? steps - 1 - i : i; }

  static LstmSequenceResult forward(const Variable& x_proj, const LstmState& init, const Variable& Uv,
                                    const Variable& bv, const std::vector<int64_t>& lengths, bool reverse) {
    auto n = std::make_shared<LstmSequenceOp>();
    const bool dims_ok = x_proj.dim() == 3 && Uv.dim() == 2;
    LUONG_CHECK(dims_ok, "lstm_sequence: x_proj must be (T, B, 4H) and U (H, 4H), got ", shape_str(x_proj.shape()),
                " and ", shape_str(Uv.shape()));
    const int64_t T = x_proj.size(0), B = x_proj.size(1), H = Uv.size(0), G = 4 * H;
    const bool shapes_ok = x_proj.size(2) == G && Uv.size(1) == G && bv.shape() == Shape{G} &&
                           init.h.shape() == Shape{B, H} && init.c.shape() == Shape{B, H};
    LUONG_CHECK(shapes_ok, "lstm_sequence: inconsistent shapes x_proj ", shape_str(x_proj.shape()), ", h0 ",
                shape_str(init.h.shape()), ", c0 ", shape_str(init.c.shape()), ", U ", shape_str(Uv.shape()), ", b ",
                shape_str(bv.shape()));
    LUONG_CHECK(T >= 1, "lstm_sequence: needs at least one step");
    LUONG_CHECK(static_cast<int64_t>(lengths.size()) == B, "lstm_sequence: ", lengths.size(), " lengths for a batch of ",
                B);
    n->steps = T, n->batch = B, n->hidden = H, n->reverse = reverse;
    n->u_param = is_parameter_view(Uv);
    const Device dev = x_proj.device();
    const DType dt = x_proj.dtype();

    bool padded = false;
    std::vector<double> keep(static_cast<size_t>(T * B), 1.0);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = lengths[static_cast<size_t>(b)];
      LUONG_CHECK(len >= 1 && len <= T, "lstm_sequence: sentence length ", len, " outside [1, ", T, "]");
      for (int64_t i = 0; i < T; ++i)
        if (n->position(i) >= len) keep[static_cast<size_t>(i * B + b)] = 0.0, padded = true;
    }
    if (padded) n->keep = Tensor::from(keep, {T, B}, DType::u8, dev);

    n->gates = Tensor::empty({T, B, G}, dt, dev);
    n->h_all = Tensor::empty({T + 1, B, H}, dt, dev);
    n->c_all = Tensor::empty({T + 1, B, H}, dt, dev);
    n->h_all.select(0).copy_(init.h.data());
    n->c_all.select(0).copy_(init.c.data());
    Tensor z = Tensor::empty({B, G}, dt, dev);
    PackedWeightScope packed_u;  // U is packed at the first step and reused by the other T - 1
    dispatch_float(dt, "lstm_sequence", [&](auto tag) {
      using T_ = decltype(tag);
      T_* pz = z.data<T_>();
      const T_* pb = bv.data().data<T_>();
      for (int64_t i = 0; i < T; ++i) {
        const T_* x = x_proj.data().data<T_>() + n->position(i) * B * G;
        const T_* h_prev = n->h_all.data<T_>() + i * B * H;
        const T_* c_prev = n->c_all.data<T_>() + i * B * H;
        T_* h = n->h_all.data<T_>() + (i + 1) * B * H;
        T_* c = n->c_all.data<T_>() + (i + 1) * B * H;
        // z = x + b, then z += h_prev U: the same operations in the same order as lstm_cell.
        LUONG_KERNEL(dev, binary_forward<T_>, BinaryKind::add, B * G, B * G, x, G, pb, pz);
        weight_gemm<T_>(false, B, G, H, h_prev, Uv.data(), T_(1), pz, n->u_param);
        LUONG_KERNEL(dev, lstm_cell_forward<T_>, B, H, pz, c_prev, n->gates.data<T_>() + i * B * G, c, h);
        if (padded) {
          const uint8_t* k = n->keep.data<uint8_t>() + i * B;
          LUONG_KERNEL(dev, lstm_carry_rows<T_>, B, H, k, h_prev, h);
          LUONG_KERNEL(dev, lstm_carry_rows<T_>, B, H, k, c_prev, c);
        }
      }
    });
    // Outputs by position t: h_all[1..T] in processing order, so a reversed layer's are flipped.
    Tensor outputs;
    if (!reverse) {
      outputs = n->h_all.narrow(1, T);  // a view: the states are saved for backward anyway (-1.3 MB a layer)
    } else {
      outputs = Tensor::empty({T, B, H}, dt, dev);
      for (int64_t i = 0; i < T; ++i) outputs.select(n->position(i)).copy_(n->h_all.select(i + 1));
    }
    Tensor h_final = n->h_all.select(T).clone(), c_final = n->c_all.select(T).clone();
    n->U = Uv.data();
    auto outs = attach(n, {x_proj, init.h, init.c, Uv, bv}, {outputs, h_final, c_final});
    return {outs[0], {outs[1], outs[2]}};
  }

  void backward() override {
    const Tensor& d_out = out_grad(0);
    const Tensor& d_hT = out_grad(1);
    const Tensor& d_cT = out_grad(2);
    if (!d_out.defined() && !d_hT.defined() && !d_cT.defined()) return;
    const int64_t T = steps, B = batch, H = hidden, G = 4 * H;
    const Device dev = gates.device();
    const DType dt = gates.dtype();
    Tensor dz = Tensor::empty({T, B, G}, dt, dev);  // every step's dz, in processing order
    Tensor dh = Tensor::zeros({B, H}, dt, dev), dc = Tensor::zeros({B, H}, dt, dev);
    Tensor dh_prev = Tensor::empty({B, H}, dt, dev), dc_prev = Tensor::empty({B, H}, dt, dev);
    if (d_hT.defined()) dh.copy_(d_hT);
    if (d_cT.defined()) dc.copy_(d_cT);
    PackedWeightScope packed_u;  // U^T is packed at the first step and reused by the others
    dispatch_float(dt, "lstm_sequence backward", [&](auto tag) {
      using T_ = decltype(tag);
      for (int64_t i = T - 1; i >= 0; --i) {
        if (d_out.defined())  // the output at this step is h after it
          LUONG_KERNEL(dev, axpy<T_>, B * H, T_(1), d_out.data<T_>() + position(i) * B * H, dh.data<T_>());
        T_* dzi = dz.data<T_>() + i * B * G;
        // dc_prev is overwritten (as if zeroed first): no fill per step.
        LUONG_KERNEL(dev, lstm_cell_backward<T_>, B, H, gates.data<T_>() + i * B * G, c_all.data<T_>() + i * B * H,
                     c_all.data<T_>() + (i + 1) * B * H, dh.data<T_>(), dc.data<T_>(), dzi, dc_prev.data<T_>(), false);
        const uint8_t* k = keep.defined() ? keep.data<uint8_t>() + i * B : nullptr;
        if (k) LUONG_KERNEL(dev, lstm_carry_rows<T_>, B, G, k, static_cast<const T_*>(nullptr), dzi);  // a carry: no dz
        // dh_prev = dz U^T; a carried row passes its dh and dc through unchanged.
        weight_gemm<T_>(true, B, H, G, dzi, U, T_(0), dh_prev.data<T_>(), u_param);
        if (k) {
          LUONG_KERNEL(dev, lstm_carry_rows<T_>, B, H, k, dh.data<T_>(), dh_prev.data<T_>());
          LUONG_KERNEL(dev, lstm_carry_rows<T_>, B, H, k, dc.data<T_>(), dc_prev.data<T_>());
        }
        std::swap(dh, dh_prev);
        std::swap(dc, dc_prev);
      }
      if (needs_grad(0) && reverse) {  // dx_proj: dz itself, by position (forward order: adopted below)
        T_* gx = grad_slot(0).data<T_>();
        for (int64_t i = 0; i < T; ++i)
          LUONG_KERNEL(dev, axpy<T_>, B * G, T_(1), dz.data<T_>() + i * B * G, gx + position(i) * B * G);
      }
      if (needs_grad(1)) LUONG_KERNEL(dev, axpy<T_>, B * H, T_(1), dh.data<T_>(), grad_slot(1).data<T_>());
      if (needs_grad(2)) LUONG_KERNEL(dev, axpy<T_>, B * H, T_(1), dc.data<T_>(), grad_slot(2).data<T_>());
      if (needs_grad(3)) {  // dU (H, 4H) += H_prev^T (H, T * B) dZ (T * B, 4H): one GEMM over every step
        bool fresh = false;
        T_* du = grad_target(3, fresh).data<T_>();
        LUONG_KERNEL(dev, gemm<T_>, true, false, H, G, T * B, T_(1), h_all.data<T_>(), dz.data<T_>(), T_(fresh ? 0 : 1),
                     du);
      }
      if (needs_grad(4)) LUONG_KERNEL(dev, sum_rows_accumulate<T_>, T * B, G, dz.data<T_>(), grad_slot(4).data<T_>());
    });
    // In forward order dz is dx_proj position by position: handed over (adopted into an empty slot) once
    // the GEMMs above are done with it, instead of being added into a zero-filled (T, B, 4H) buffer.
    if (needs_grad(0) && !reverse) accumulate_grad_owned(0, std::move(dz));
  }
  void release_saved() override { gates = h_all = c_all = keep = U = Tensor(); }
};

}  // namespace

LUONG_REGISTER_OP("lstm_sequence");

LstmSequenceResult lstm_sequence(const Variable& x_proj, const LstmState& init, const Variable& U, const Variable& b,
                                 const std::vector<int64_t>& lengths, bool reverse) {
  return LstmSequenceOp::forward(x_proj, init, U, b, lengths, reverse);
}

}  // namespace luong
