// Variable: a tensor plus its place in the define-by-run graph.
// Leaves (parameters, inputs) hold their gradient; interior variables point at the Node that made them.
// Nodes hold their inputs strongly and their outputs weakly, so the graph is a DAG of shared_ptrs with no
// cycles, and it is freed as soon as the last output a user holds goes away or backward has run. What a
// node holds of an interior input is its place in the graph, not its data (see VariableImpl::data).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"

namespace luong {

class Node;
struct VariableImpl;

// Fired once per backward pass when a leaf's gradient is final (no more contributions can arrive).
using GradReadyHook = std::function<void(VariableImpl&)>;

// How many graph edges of one backward pass lead into a variable: counted by the pass's discovery
// (autograd/engine.cpp) and, for a leaf, counted down as they deliver, its gradient final at zero. Tagged with
// the pass's number, as Node's table index is, instead of two hash maps per pass (a heap node per variable):
// counts left by another pass read as none. A variable is in one running pass at a time (two threads' passes
// sharing one would race on its gradient as well).
class PassUses {
 public:
  // Discovery found one more edge into the variable in pass `pass`; the first in a pass drops an earlier one's.
  void count_edge(uint64_t pass) {
    if (pass_ != pass) {
      pass_ = pass;
      uses_ = left_ = 0;
    }
    ++uses_;
    ++left_;
  }
  // The edges counted in `pass`: 0 when the variable is not in that pass's graph.
  int in(uint64_t pass) const { return pass_ == pass ? uses_ : 0; }
  // One edge has delivered its gradient: true when it was the last of the pass.
  bool deliver() { return --left_ == 0; }

 private:
  uint64_t pass_ = 0;
  int uses_ = 0;
  int left_ = 0;
};

struct VariableImpl {
  // An interior variable's data is released (only its shape kept) once no Variable refers to it: the nodes
  // that consume it hold it for the graph only, and each saves, as its own members, exactly the tensors its
  // backward reads. So an activation no backward needs (an input projection, a reshape's source) is freed
  // during forward instead of living until backward, as in PyTorch, where the graph holds saved tensors only.
  Tensor data;
  Tensor grad;  // leaves: accumulated across passes until zeroed; interior: freed once consumed
  // An interior gradient may alias a tensor another holder still reads: the first gradient handed to
  // Node::accumulate_grad is kept by reference, not copied (PyTorch's input buffers do the same), and is
  // copied only if a second contribution must be added in place (writable_grad). Leaves never alias.
  bool grad_shared = false;
  // A leaf's gradient that counts as zero but was not cleared (FlatParameters::zero_grad, PyTorch's
  // set_to_none): its first contribution overwrites it, and a reader gets it zeroed first (read_grad).
  // Saves a pass over every gradient per step, and the reads of those zeros by the first accumulation.
  bool grad_zero_pending = false;
  // The root's gradient is the implicit 1 of backward(): a loss node may then skip reading it back to the
  // host (a device sync, and impossible in a captured step) to learn its value.
  bool grad_is_one = false;
  bool requires_grad = false;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  int output_index = 0;           // which output of grad_fn this is
  std::string name;               // parameter name (for messages and hooks)
  GradReadyHook grad_ready_hook;
  int consumer_edges = 0;  // nodes holding this as an input (Node::attach / Node::release)
  bool shows_parameter = false;  // a slice or reshape of a parameter, in any grad mode (ops/weight_gemm.h)
  // A model parameter (FlatParameters), trainable or frozen: a weight nothing writes during a pass, which
  // ops/weight_gemm.h may pack once per scope even when its gradient is off.
  bool is_parameter = false;
  PassUses pass_uses;            // the graph edges into this variable in the backward pass now running
};

// v.grad, made safe to accumulate into in place: a shared (aliased) gradient is copied first, a pending zero
// (grad_zero_pending) is written.
Tensor& writable_grad(VariableImpl& v);
// v.grad as a value: a pending zero is written first.
const Tensor& read_grad(VariableImpl& v);
// v.grad for a kernel that writes all of it, allocated if undefined. overwrite = true when its contents need
// not be read (it was undefined, or a pending zero, which the caller must now write in full: beta 0);
// otherwise the caller accumulates (beta 1) into the buffer, made writable first.
Tensor& grad_to_write(VariableImpl& v, bool& overwrite);

class Variable {
 public:
  Variable() = default;
  explicit Variable(Tensor data, bool requires_grad = false, std::string name = {});
  explicit Variable(std::shared_ptr<VariableImpl> impl) : impl_(std::move(impl)) {}
  Variable(const Variable&) = default;
  Variable(Variable&&) noexcept = default;
  Variable& operator=(const Variable& other);
  Variable& operator=(Variable&& other) noexcept;
  ~Variable() { drop_handle(); }

  bool defined() const { return impl_ != nullptr; }
  const Tensor& data() const { return impl_->data; }
  Tensor& data() { return impl_->data; }
  const Tensor& grad() const { return read_grad(*impl_); }
  bool requires_grad() const { return impl_ && impl_->requires_grad; }
  bool is_leaf() const { return impl_->grad_fn == nullptr; }
  const std::string& name() const { return impl_->name; }
  const Shape& shape() const { return impl_->data.shape(); }
  int64_t size(int64_t d) const { return impl_->data.size(d); }
  int64_t dim() const { return impl_->data.dim(); }
  DType dtype() const { return impl_->data.dtype(); }
  Device device() const { return impl_->data.device(); }
  const std::shared_ptr<VariableImpl>& impl() const { return impl_; }

  // Backpropagates from this scalar (gradient 1), or from this variable with the given output gradient.
  void backward() const;
  void backward(const Tensor& grad_output) const;
  // A leaf sharing the data, cut from the graph.
  Variable detach() const { return Variable(impl_->data, false); }
  void set_grad_ready_hook(GradReadyHook hook) { impl_->grad_ready_hook = std::move(hook); }
  // Points the gradient at a caller-owned buffer (a view into a flat gradient bucket).
  void set_grad_buffer(Tensor grad) { impl_->grad = std::move(grad); }
  // Turns a leaf's gradient on or off (PyTorch's requires_grad_): off, ops on it record nothing for it, so
  // backward neither computes its gradient nor, where no other input needs one, the work that led to it.
  void set_requires_grad(bool on);

 private:
  // Lets go of impl_, releasing an interior variable's data when this was the last handle (see VariableImpl).
  void drop_handle() noexcept;

  std::shared_ptr<VariableImpl> impl_;
};

// Gradient recording is on by default; NoGradGuard turns it off for a scope (evaluation, decoding).
class GradMode {
 public:
  static bool enabled();
  static void set_enabled(bool on);
};

class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace luong
