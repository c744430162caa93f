// Node: the backward half of an op. Each op is a struct deriving from Node whose static forward() computes
// the result and saves, as named members, exactly what backward needs; backward() reads the gradients of
// the outputs and accumulates (+=) into the gradients of the inputs. A node's input edges serve the graph
// only: an interior input's data is released once no Variable refers to it (VariableImpl in variable.h),
// so backward must never read an input's data through the edge.
#pragma once
#include <initializer_list>
#include <memory>
#include <vector>

#include "framework/autograd/variable.h"

namespace luong {

class Node {
 public:
  virtual ~Node();
  virtual const char* name() const = 0;
  virtual void backward() = 0;

  const std::vector<std::shared_ptr<VariableImpl>>& inputs() const { return inputs_; }
  // Called by the engine after backward: drops the saved tensors and the edges to the inputs.
  void release();

  // Wires outputs to this node when recording is on and some input needs a gradient; otherwise the
  // outputs are plain leaves. Returns the outputs as Variables.
  static bool should_record(std::initializer_list<const Variable*> inputs);
  static std::vector<Variable> attach(const std::shared_ptr<Node>& node, std::vector<Variable> inputs,
                                      std::vector<Tensor> outputs);
  static Variable attach(const std::shared_ptr<Node>& node, std::vector<Variable> inputs, Tensor output) {
    return attach(node, std::move(inputs), std::vector<Tensor>{std::move(output)})[0];
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
  std::vector<std::shared_ptr<VariableImpl>> inputs_;
  std::vector<std::weak_ptr<VariableImpl>> outputs_;
  static const Tensor kUndefined;
};

}  // namespace luong
