// The generator and its loss as one op: z = x W + b, then softmax cross-entropy, computed over row CHUNKS of
// the (N, V) logits, so no vocabulary-sized buffer larger than one chunk ever exists. Composed from matmul,
// add and cross_entropy the same step keeps three (N, V) tensors alive (logits, log-probabilities, gradient);
// at the benchmark's 1280 x 8000 that is 123 MB, the largest activation of the model by far.
//
// How backward can do without the logits: the loss is a scalar, so its upstream gradient g is one number
// and every input gradient is linear in it: dz = g (p - q), dx = dz W^T, dW = x^T dz, db = colsum(dz). When
// a backward pass may follow, forward computes each chunk's p - q while the chunk is in cache and folds it
// into dx, dW and db for g = 1 at once; backward only scales them by g (nothing at all for the trainer's
// g = 1) and hands them over. The GEMMs are the same as backward would run, split along the rows; the
// saved state is (N, H) + (H, V) + (V) instead of (N, V). Equal to the composition to float rounding
// (tests/ops/linear_cross_entropy_test.cpp, chunked and whole).
#include <algorithm>

#include "framework/autograd/node.h"
#include "framework/kernels/cpu/bf16_gemm.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/loss_targets.h"
#include "framework/ops/op_registry.h"
#include "framework/ops/ops.h"
#include "framework/ops/tensor_math.h"
#include "framework/ops/weight_gemm.h"

namespace luong {
namespace {

// Logit elements materialised at once. On a CPU 2^21 floats (8 MB) keep a chunk's softmax and gradient
// passes in the last-level cache while the weight-gradient GEMM still gets K >= 256 rows at the benchmark's
// V = 8000 (bench/engine_bench: K = 256 runs within a few percent of K = 1280). On a GPU the budget only
// bounds memory: 2^27 floats (512 MB) leave the paper's 6400 x 50000 in three chunks of large GEMMs.
// Rows are rounded down to a multiple of 64: OpenBLAS runs the three chunk GEMMs 4% faster at 256 rows than
// at the 262 that 2^21 / 8000 gives (185.6 / 184.1 / 193.9 against 179.0 / 173.4 / 186.7 GFLOP/s on 2 cores).
int64_t default_chunk_rows(Device dev, int64_t vocab) {
  const int64_t budget = dev.is_cuda() ? (int64_t{1} << 27) : (int64_t{1} << 21);
  const int64_t rows = std::max<int64_t>(1, budget / std::max<int64_t>(1, vocab));
  return rows >= 64 ? rows / 64 * 64 : rows;
}

// The rows of x (rows, cols) whose target is not ignore_index, and those targets, packed in order.
template <class T>
void gather_kept_rows(int64_t rows, int64_t cols, const T* x, const int64_t* targets, int64_t ignore_index, T* x_kept,
                      int64_t* targets_kept) {
  for (int64_t r = 0; r < rows; ++r) {
    if (targets[r] == ignore_index) continue;
    std::copy_n(x + r * cols, cols, x_kept);
    x_kept += cols;
    *targets_kept++ = targets[r];
  }
}

// The inverse for a gradient: kept rows back to their places, zero rows where the target is ignored.
template <class T>
void scatter_kept_rows(int64_t rows, int64_t cols, const int64_t* targets, int64_t ignore_index, const T* kept,
                       T* out) {
  for (int64_t r = 0; r < rows; ++r) {
    T* row = out + r * cols;
    if (targets[r] == ignore_index) {
      std::fill_n(row, cols, T(0));
      continue;
    }
    std::copy_n(kept, cols, row);
    kept += cols;
  }
}

struct LinearCrossEntropyOp : Node {
  // Gradients for g = 1, computed in forward (undefined where the input needs none).
  Tensor dx, dw, db;
  const char* name() const override { return "linear_cross_entropy"; }

  static CrossEntropy forward(const Variable& x, const Variable& w, const Variable& b, const Tensor& targets,
                              int64_t ignore_index, double eps, int64_t chunk_rows) {
    LUONG_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(0), "linear_cross_entropy: cannot multiply ",
                shape_str(x.shape()), " by ", shape_str(w.shape()));
    LUONG_CHECK(!b.defined() || b.shape() == Shape{w.size(1)}, "linear_cross_entropy: bias ",
                b.defined() ? shape_str(b.shape()) : std::string(), " does not match weight ", shape_str(w.shape()));
    LUONG_CHECK(x.dtype() == w.dtype() && (!b.defined() || b.dtype() == w.dtype()),
                "linear_cross_entropy: dtype mismatch ", x.dtype(), " vs ", w.dtype());
    LUONG_CHECK(chunk_rows >= 0, "linear_cross_entropy: chunk_rows must be >= 0 (0 = automatic), got ", chunk_rows);
    check_same_device("linear_cross_entropy", x.data(), w.data());
    const int64_t rows = x.size(0), in_dim = x.size(1), vocab = w.size(1);
    const int64_t tokens = check_loss_targets("linear_cross_entropy", targets, rows, vocab, ignore_index, eps);
    const Device dev = x.device();
    const DType dt = x.dtype();
    if (chunk_rows == 0) chunk_rows = default_chunk_rows(dev, vocab);
    // Rows whose target is ignore_index (a batch's padding) add nothing to the loss or to any gradient: their
    // dz row is zero. On a CPU they are left out of the three GEMMs: the kept rows of x and their targets are
    // gathered, the chunks run over those, and their dx rows are scattered back between zero rows. On a GPU
    // the targets live on the device and the row count of a GEMM on the host, so every row is kept there.
    const bool skip_ignored = dev.is_cpu() && tokens >= 0 && tokens < rows;
    const int64_t kept = skip_ignored ? tokens : rows;

    auto node = std::make_shared<LinearCrossEntropyOp>();
    const bool record = Node::should_record({&x, &w, &b});
    const bool want_dx = record && x.requires_grad();
    const bool want_dw = record && w.requires_grad();
    const bool want_db = record && b.defined() && b.requires_grad();
    if (want_dx) node->dx = Tensor::empty({rows, in_dim}, dt, dev);
    if (want_dw)  // the first chunk's GEMM writes it with beta = 0; with no rows it stays zero
      node->dw = kept > 0 ? Tensor::empty({in_dim, vocab}, dt, dev) : Tensor::zeros({in_dim, vocab}, dt, dev);
    if (want_db) node->db = Tensor::zeros({vocab}, dt, dev);

    Tensor x_kept, targets_kept, dx_kept;
    if (skip_ignored) {
      x_kept = Tensor::empty({kept, in_dim}, dt, dev);
      targets_kept = Tensor::empty({kept}, DType::i64, dev);
      if (want_dx) dx_kept = Tensor::empty({kept, in_dim}, dt, dev);
    }
    if (chunk_rows > kept) chunk_rows = std::max<int64_t>(kept, 1);

    Tensor z = Tensor::empty({chunk_rows, vocab}, dt, dev);
    Tensor row_loss = Tensor::empty({kept}, dt, dev);
    // On CUDA under bf16 the weight is converted once for the chunks' forward and dx products instead of
    // twice per chunk (ops/weight_gemm.h), and on a CPU with AMX or AVX512-BF16 under bf16 packed once into bf16
    // panels. The CPU multiplies it unpacked in float32: packing the generator's weight once measured slower there
    // (docs/PERFORMANCE.md, "Measured and rejected").
    const bool w_copy = (dev.is_cuda() || cpu::bf16_gemms_native()) && is_parameter_view(w);
    PackedWeightScope weight_copies;
    dispatch_float(dt, "linear_cross_entropy", [&](auto t) {
      using T = decltype(t);
      const T* px = x.data().data<T>();
      const int64_t* pt = targets.data<int64_t>();
      T* pdx = want_dx ? node->dx.template data<T>() : nullptr;
      if (skip_ignored) {
        gather_kept_rows(rows, in_dim, px, pt, ignore_index, x_kept.data<T>(), targets_kept.data<int64_t>());
        px = x_kept.data<T>();
        pt = targets_kept.data<int64_t>();
        if (want_dx) pdx = dx_kept.data<T>();
      }
      T* pz = z.data<T>();
      const T* pb = b.defined() ? b.data().data<T>() : nullptr;
      const bool want_grads = want_dx || want_dw || want_db;
      for (int64_t r0 = 0; r0 < kept; r0 += chunk_rows) {
        const int64_t n = std::min(chunk_rows, kept - r0);
        weight_gemm<T>(false, n, vocab, in_dim, px + r0 * in_dim, w.data(), T(0), pz, w_copy);
        // Bias, loss and, when a backward pass may follow, the chunk's dz = p - q (g = 1), row by row.
        LUONG_KERNEL(dev, cross_entropy_inplace<T>, n, vocab, pz, pb, pt + r0, ignore_index, static_cast<T>(eps),
                     row_loss.data<T>() + r0, want_grads);
        if (!want_grads) continue;
        if (want_dx)  // dx rows (n, H) = dz (n, V) W^T
          weight_gemm<T>(true, n, in_dim, vocab, pz, w.data(), T(0), pdx + r0 * in_dim, w_copy);
        if (want_dw)  // dW (H, V) = x_rows^T dz for the first chunk, += for the others (no zero-fill pass)
          LUONG_KERNEL(dev, gemm<T>, true, false, in_dim, vocab, n, T(1), px + r0 * in_dim, pz, T(r0 == 0 ? 0 : 1),
                       node->dw.template data<T>());
        if (want_db) LUONG_KERNEL(dev, sum_rows_accumulate<T>, n, vocab, pz, node->db.template data<T>());
      }
      if (skip_ignored && want_dx)
        scatter_kept_rows(rows, in_dim, targets.data<int64_t>(), ignore_index, pdx, node->dx.template data<T>());
    });
    Tensor total = sum_all_scalar(row_loss);  // stays on the device
    Tensor row_losses = row_loss;
    if (skip_ignored) {  // back to one entry per row of x, 0 for the ignored ones
      row_losses = Tensor::empty({rows}, dt, dev);
      dispatch_float(dt, "linear_cross_entropy", [&](auto t) {
        using T = decltype(t);
        scatter_kept_rows(rows, 1, targets.data<int64_t>(), ignore_index, row_loss.data<T>(), row_losses.data<T>());
      });
    }
    std::vector<Variable> inputs{x, w};
    if (b.defined()) inputs.push_back(b);
    return {attach(node, std::move(inputs), total), tokens, std::move(row_losses)};
  }

  void backward() override {
    const Tensor& g = out_grad();
    if (!g.defined()) return;
    const double gv = out_grad_is_one() ? 1.0 : g.item();  // no read back for the usual seed
    // The gradients were computed for g = 1; the trainer's backward starts from the loss itself (g = 1), so
    // they are usually handed over untouched, with the bits of an unchunked GEMM split along K.
    auto give = [&](int i, Tensor& grad) {
      if (!grad.defined() || !needs_grad(i)) return;
      if (gv != 1.0) scale_(grad, gv);
      accumulate_grad_owned(i, std::move(grad));
    };
    give(0, dx);
    give(1, dw);
    if (inputs().size() > 2) give(2, db);
  }
  void release_saved() override { dx = Tensor(), dw = Tensor(), db = Tensor(); }
};

}  // namespace

LUONG_REGISTER_OP("linear_cross_entropy");

CrossEntropy linear_cross_entropy(const Variable& x, const Variable& weight, const Variable& bias,
                                  const Tensor& targets, int64_t ignore_index, double label_smoothing,
                                  int64_t chunk_rows) {
  return LinearCrossEntropyOp::forward(x, weight, bias, targets, ignore_index, label_smoothing, chunk_rows);
}

}  // namespace luong
