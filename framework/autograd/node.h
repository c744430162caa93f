// Node: the backward half of an op. Each op is a struct deriving from Node whose static forward() computes
// the result and saves, as named members, exactly what backward needs; backward() reads the gradients of
// the outputs and accumulates (+=) into the gradients of the inputs. A node's input edges serve the graph
// only: an interior input's data is released once no Variable refers to it (VariableImpl in variable.h),
// so backward must never read an input's data through the edge.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

#include "framework/autograd/variable.h"

namespace luong {

class BackwardPass;  // autograd/engine.cpp

class Node {
 public:
  virtual ~Node();
  virtual const char* name() const = 0;
  virtual void backward() = 0;

  const std::vector<std::shared_ptr<VariableImpl>>& inputs() const { return inputs_; }
  // Called by the engine after backward: drops the saved tensors and the edges to the inputs.
  void release();
  // release(), handing the edges to the caller instead of dropping them (the engine walks them next; a copy
  // was a heap allocation per node and step).
  std::vector<std::shared_ptr<VariableImpl>> release_taking_inputs();

  // Whether an op on these inputs records a node: gradient mode is on and some input needs a gradient (null
  // entries, an absent optional input, count as not). For ops that decide before computing what to save.
  static bool should_record(std::initializer_list<const Variable*> inputs);
  // Wires outputs to this node when should_record's rule holds; otherwise the outputs are plain leaves.
  // Returns the outputs as Variables. Inputs come as a braced list ({x, y}: no vector to allocate, the
  // engine's host time) or a vector.
  static std::vector<Variable> attach(const std::shared_ptr<Node>& node, std::initializer_list<Variable> inputs,
                                      std::vector<Tensor> outputs) {
    return attach_all(node, {inputs.begin(), inputs.size()}, std::move(outputs));
  }
  static std::vector<Variable> attach(const std::shared_ptr<Node>& node, const std::vector<Variable>& inputs,
                                      std::vector<Tensor> outputs) {
    return attach_all(node, inputs, std::move(outputs));
  }
  // The one-output form, most ops': no vectors of outputs or results to allocate either.
  static Variable attach(const std::shared_ptr<Node>& node, std::initializer_list<Variable> inputs, Tensor output) {
    return attach_one(node, {inputs.begin(), inputs.size()}, std::move(output));
  }
  static Variable attach(const std::shared_ptr<Node>& node, const std::vector<Variable>& inputs, Tensor output) {
    return attach_one(node, inputs, std::move(output));
  }

 protected:
  // Gradient of output k, or an undefined tensor when nothing downstream produced one.
  const Tensor& out_grad(int k = 0) const;
  // True when output k's gradient is the 1 that backward() seeds a scalar root with: its value is known on
  // the host without reading it.
  bool out_grad_is_one(int k = 0) const;
  bool needs_grad(int i) const { return inputs_[static_cast<size_t>(i)]->requires_grad; }
  // The gradient buffer of input i, zero-filled on first use (or when its zero is pending), copied first if
  // it is borrowed, for kernels that accumulate in place.
  Tensor& grad_slot(int i);
  // The gradient buffer of input i for a kernel that writes all of it: the existing buffer (fresh = false:
  // accumulate, e.g. GEMM beta 1) or a new or pending-zero one (fresh = true: overwrite, beta 0). Saves
  // grad_slot's zero-fill and the kernel's read of those zeros (about 40 MB a training step on the benchmark
  // model).
  Tensor& grad_target(int i, bool& fresh);
  // Adds t into input i's gradient. An interior input's empty slot borrows t instead of copying it
  // (VariableImpl::grad_shared), so the caller must not write t afterwards; a leaf's slot gets a copy.
  void accumulate_grad(int i, const Tensor& t);
  // Like accumulate_grad, but t is freshly computed and owned by the caller, so it can be adopted.
  void accumulate_grad_owned(int i, Tensor&& t);
  // Adds aᵀ g into input i's gradient, for a (m, k) and g (m, n) with input i (k, n): the weight gradient
  // of x W. When the input is a weight used by several nodes of this backward pass (every decoder step),
  // the product is deferred and summed with the others in one GEMM (autograd/weight_grad_deferral.h).
  // a and g must stay unmodified afterwards.
  void accumulate_weight_grad(int i, const Tensor& a, const Tensor& g);
  // Adds the column sums of g (m, n) into input i's gradient (n): the gradient of a bias added to every
  // row. Deferred like accumulate_weight_grad when the bias is used by several nodes of this pass (one
  // column sum over all steps' rows). g must stay unmodified afterwards.
  void accumulate_bias_grad(int i, const Tensor& g);
  // Ops free their saved tensors here (default: nothing saved beyond members released by destruction).
  virtual void release_saved() {}

 private:
  // attach's steps: whether to record; the edges to the inputs; output k as an interior variable of this node.
  static std::vector<Variable> attach_all(const std::shared_ptr<Node>& node, std::span<const Variable> inputs,
                                          std::vector<Tensor> outputs);
  static Variable attach_one(const std::shared_ptr<Node>& node, std::span<const Variable> inputs, Tensor output);
  static bool records(std::span<const Variable> inputs);
  void connect(std::span<const Variable> inputs, size_t output_count);
  static std::shared_ptr<VariableImpl> make_output(const std::shared_ptr<Node>& node, Tensor&& data, size_t k);

  std::vector<std::shared_ptr<VariableImpl>> inputs_;
  std::vector<std::weak_ptr<VariableImpl>> outputs_;
  static const Tensor kUndefined;

  // Where the backward pass now running keeps this node's bookkeeping: the pass's number and an index into its
  // table, written and read by that pass alone (BackwardPass, autograd/engine.cpp). Two integers on the node
  // instead of a hash map keyed by node, whose entry per node and step was a heap allocation; the pass number
  // makes an entry left by an earlier pass (one that threw, say) read as unseen.
  friend class BackwardPass;
  uint64_t backward_pass_ = 0;
  uint32_t backward_index_ = 0;
};

}  // namespace luong
