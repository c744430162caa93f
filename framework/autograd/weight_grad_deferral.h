// Deferred weight gradients: one GEMM per weight per backward pass instead of one per time step.
//
// A weight used at every step of a recurrence (the decoder's LSTM matrices and W_c, which input feeding
// keeps from being batched over time in the forward pass) receives one contribution A_tᵀ G_t per step, each
// with only m = batch rows. GEMMs with so small an inner dimension run well below the library's peak
// (OpenBLAS on this project's 2-core CPU: 136 GFLOP/s at K = 64 against 196 at K = 1280). Nodes hand such
// products to the backward pass in progress instead (Node::accumulate_weight_grad); the engine runs one
// GEMM with K = Σ m over the row-stacked pairs once the weight's last consumer has run, before its
// gradient-ready hook fires (on the CPU in float32 without copying them: add_matmul_tn_stacked_). The order
// of the stacked rows is the engine's deterministic node order, so results are
// bitwise reproducible from run to run and rank to rank.
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "framework/autograd/variable.h"

namespace luong {

class WeightGradDeferral {
 public:
  // Products with more rows than this already run near the GEMM's peak and are not deferred.
  static constexpr int64_t kMaxRows = 512;

  // pass: the number of the backward pass, whose discovery counted the graph edges into each variable
  // (VariableImpl::pass_uses). Installs itself as the pass in progress on this thread until destroyed.
  explicit WeightGradDeferral(uint64_t pass);
  // Drops products never flushed (a backward that threw), so the next pass starts clean.
  ~WeightGradDeferral();
  WeightGradDeferral(const WeightGradDeferral&) = delete;
  WeightGradDeferral& operator=(const WeightGradDeferral&) = delete;

  // The pass in progress on this thread, or null outside backward.
  static WeightGradDeferral* current();

  // Keeps a (m, k) and g (m, n) for v's gradient (k, n) += aᵀ g when v has several consumers in this pass
  // and m <= kMaxRows; returns false otherwise and the caller runs the GEMM itself. a and g must not be
  // written to afterwards (saved activations and a node's own gradient buffers are not).
  bool defer(const std::shared_ptr<VariableImpl>& v, const Tensor& a, const Tensor& g);
  // The same for a bias: keeps g (m, n) for v's gradient (n) += the column sums of g, summed over all
  // steps in one kernel call instead of one per step (an LSTM cell's b at every decoder step).
  bool defer_column_sum(const std::shared_ptr<VariableImpl>& v, const Tensor& g);
  // Adds the stacked product (or column sums) of v's deferred parts into v.grad (zero-filled when empty);
  // nothing to do when v has none. The engine calls it when v's last consumer has run.
  void flush(VariableImpl& v);
  bool empty() const { return pending_.empty(); }
  // Products and column sums deferred on this thread since the process started (for tests and benchmarks).
  static int64_t deferred_count();
  // Stacks of right-hand parts made by flushes on this thread since the process started: an LSTM cell's
  // dz feeds dW, dU and db, and is stacked once for the three (for tests).
  static int64_t stacked_count();

 private:
  struct Pending {
    std::shared_ptr<VariableImpl> variable;  // kept alive until flushed
    std::vector<Tensor> a, g;                // a is empty for a column sum
    bool column_sum = false;
  };
  // A stack of right-hand parts that another pending product still needs: kept from the first of them to
  // flush until the last, so one step's gradients are copied once however many weights they feed.
  struct SharedStack {
    std::vector<Tensor> parts;
    Tensor rows;
  };
  // v's number of consumers in this pass when it has several and its product with `rows` rows has the expected
  // sizes; 0 when the product is not to be deferred.
  int admit(const std::shared_ptr<VariableImpl>& v, int64_t rows, int64_t numel_a, int64_t numel_g);
  // How many pending entries have `parts` as their right-hand parts.
  int sharers(const std::vector<Tensor>& parts) const;
  // The stack of `parts` (cols wide): the shared one when it exists; else a new one, kept for the others
  // when `keep`, made for this flush alone when `required`, or none (undefined) when the caller can do
  // without.
  Tensor shared_stack(const std::vector<Tensor>& parts, int64_t cols, bool keep, bool required);
  void release_stack(const std::vector<Tensor>& parts);

  uint64_t pass_;
  std::unordered_map<VariableImpl*, Pending> pending_;
  std::vector<SharedStack> stacks_;
  WeightGradDeferral* previous_;
};

}  // namespace luong
