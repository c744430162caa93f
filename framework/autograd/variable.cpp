#include "framework/autograd/variable.h"

#include <algorithm>

#include "framework/autograd/node.h"
#include "framework/autograd/weight_grad_deferral.h"
#include "framework/ops/tensor_math.h"

namespace luong {
namespace {
thread_local bool g_grad_enabled = true;
}

bool GradMode::enabled() { return g_grad_enabled; }
void GradMode::set_enabled(bool on) { g_grad_enabled = on; }

Variable::Variable(Tensor data, bool requires_grad, std::string name) : impl_(std::make_shared<VariableImpl>()) {
  impl_->data = std::move(data);
  impl_->requires_grad = requires_grad;
  impl_->name = std::move(name);
}

void Variable::set_requires_grad(bool on) {
  LUONG_CHECK(is_leaf(), "set_requires_grad on '", impl_->name, "', which is not a leaf (made by an op)");
  impl_->requires_grad = on;
}

Variable& Variable::operator=(const Variable& other) {
  if (this != &other) {
    std::shared_ptr<VariableImpl> keep = other.impl_;  // other may be the last handle besides this one
    drop_handle();
    impl_ = std::move(keep);
  }
  return *this;
}

Variable& Variable::operator=(Variable&& other) noexcept {
  if (this != &other) {
    drop_handle();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

void Variable::drop_handle() noexcept {
  // use_count counts this handle, the consumers' edges and anything else holding the impl (the engine
  // during backward, another handle): data goes only when nothing but edges will remain. Leaves keep
  // theirs (parameters, inputs the caller may read again).
  VariableImpl* v = impl_.get();
  if (v && v->grad_fn && v->data.defined() && impl_.use_count() == 1 + v->consumer_edges)
    v->data = v->data.shape_only();
  impl_.reset();
}

const Tensor Node::kUndefined;

Node::~Node() {
  for (auto& in : inputs_) --in->consumer_edges;
}

namespace {

// The one recording rule, for both forms of the inputs: gradient mode on and some input needs a gradient.
template <class Inputs, class NeedsGrad>
bool records_for(const Inputs& inputs, NeedsGrad needs_grad) {
  return GradMode::enabled() && std::any_of(inputs.begin(), inputs.end(), needs_grad);
}

}  // namespace

bool Node::should_record(std::initializer_list<const Variable*> inputs) {
  return records_for(inputs, [](const Variable* v) { return v && v->requires_grad(); });
}

bool Node::records(std::span<const Variable> inputs) {
  return records_for(inputs, [](const Variable& v) { return v.requires_grad(); });
}

void Node::connect(std::span<const Variable> inputs, size_t output_count) {
  inputs_.reserve(inputs.size());  // one allocation each, not a growing vector's two or three
  outputs_.reserve(output_count);
  for (auto& v : inputs) {
    inputs_.push_back(v.impl());
    ++v.impl()->consumer_edges;
  }
}

std::shared_ptr<VariableImpl> Node::make_output(const std::shared_ptr<Node>& node, Tensor&& data, size_t k) {
  auto impl = std::make_shared<VariableImpl>();
  impl->data = std::move(data);
  impl->requires_grad = true;
  impl->grad_fn = node;
  impl->output_index = static_cast<int>(k);
  node->outputs_.push_back(impl);
  return impl;
}

std::vector<Variable> Node::attach_all(const std::shared_ptr<Node>& node, std::span<const Variable> inputs,
                                       std::vector<Tensor> outputs) {
  std::vector<Variable> result;
  result.reserve(outputs.size());
  if (!records(inputs)) {
    for (auto& t : outputs) result.emplace_back(std::move(t));
    node->release();
    return result;
  }
  node->connect(inputs, outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) result.emplace_back(make_output(node, std::move(outputs[k]), k));
  return result;
}

Variable Node::attach_one(const std::shared_ptr<Node>& node, std::span<const Variable> inputs, Tensor output) {
  if (!records(inputs)) {
    node->release();
    return Variable(std::move(output));
  }
  node->connect(inputs, 1);
  return Variable(make_output(node, std::move(output), 0));
}

void Node::release() { release_taking_inputs(); }

std::vector<std::shared_ptr<VariableImpl>> Node::release_taking_inputs() {
  for (auto& in : inputs_) --in->consumer_edges;
  std::vector<std::shared_ptr<VariableImpl>> inputs = std::move(inputs_);
  inputs_.clear();  // a moved-from vector is valid but unspecified: make it empty
  outputs_.clear();
  release_saved();
  return inputs;
}

const Tensor& Node::out_grad(int k) const {
  auto out = outputs_[static_cast<size_t>(k)].lock();
  return out ? out->grad : kUndefined;
}

bool Node::out_grad_is_one(int k) const {
  auto out = outputs_[static_cast<size_t>(k)].lock();
  return out && out->grad_is_one;
}

namespace {

void write_pending_zero(VariableImpl& v) {
  if (v.grad_zero_pending) {
    v.grad.zero_();
    v.grad_zero_pending = false;
  }
}

}  // namespace

Tensor& writable_grad(VariableImpl& v) {
  if (v.grad_shared) {
    v.grad = v.grad.clone();
    v.grad_shared = false;
  }
  write_pending_zero(v);
  return v.grad;
}

const Tensor& read_grad(VariableImpl& v) {
  write_pending_zero(v);
  return v.grad;
}

Tensor& grad_to_write(VariableImpl& v, bool& overwrite) {
  overwrite = !v.grad.defined() || v.grad_zero_pending;
  if (!v.grad.defined()) {
    v.grad = Tensor::empty(v.data.shape(), v.data.dtype(), v.data.device());
    v.grad_shared = false;
  }
  if (!overwrite) return writable_grad(v);
  v.grad_zero_pending = false;
  return v.grad;
}

Tensor& Node::grad_slot(int i) {
  VariableImpl& in = *inputs_[static_cast<size_t>(i)];
  if (!in.grad.defined()) {
    in.grad = Tensor::zeros(in.data.shape(), in.data.dtype(), in.data.device());
    in.grad_shared = false;
  }
  return writable_grad(in);
}

Tensor& Node::grad_target(int i, bool& fresh) { return grad_to_write(*inputs_[static_cast<size_t>(i)], fresh); }

void Node::accumulate_weight_grad(int i, const Tensor& a, const Tensor& g) {
  const auto& in = inputs_[static_cast<size_t>(i)];
  if (WeightGradDeferral* pass = WeightGradDeferral::current(); pass && pass->defer(in, a, g)) return;
  bool overwrite = false;
  Tensor& target = grad_target(i, overwrite);
  add_matmul_tn_(target, a, g, overwrite);
}

void Node::accumulate_bias_grad(int i, const Tensor& g) {
  const auto& in = inputs_[static_cast<size_t>(i)];
  if (WeightGradDeferral* pass = WeightGradDeferral::current(); pass && pass->defer_column_sum(in, g)) return;
  bool overwrite = false;
  Tensor& target = grad_target(i, overwrite);
  add_column_sums_(target, g, overwrite);
}

void Node::accumulate_grad(int i, const Tensor& t) {
  VariableImpl& in = *inputs_[static_cast<size_t>(i)];
  LUONG_CHECK(t.numel() == in.data.numel(), name(), " backward: gradient ", t.describe(), " for input ",
              in.data.describe());
  if (in.grad_zero_pending) {  // a parameter's first contribution of the pass: written, not added to zeros
    in.grad_zero_pending = false;
    in.grad.copy_(t);
    return;
  }
  if (!in.grad.defined()) {
    // An interior gradient borrows t: its consumers only read it, and nothing writes t afterwards (the
    // contract of accumulate_grad's callers). A leaf's gradient outlives the pass and is written in place
    // by optimizers and clipping, so it gets its own copy.
    in.grad_shared = in.grad_fn != nullptr;
    in.grad = (in.grad_shared ? t : t.clone()).view(in.data.shape());
    return;
  }
  add_(writable_grad(in), t);
}

void Node::accumulate_grad_owned(int i, Tensor&& t) {
  VariableImpl& in = *inputs_[static_cast<size_t>(i)];
  LUONG_CHECK(t.numel() == in.data.numel(), name(), " backward: gradient ", t.describe(), " for input ",
              in.data.describe());
  if (in.grad_zero_pending) {  // the buffer must stay (a view into FlatParameters): copied into it
    in.grad_zero_pending = false;
    in.grad.copy_(t);
    return;
  }
  if (!in.grad.defined() || in.grad_shared) {
    if (in.grad.defined()) add_(t, in.grad);  // t + shared == shared + t, bit for bit; and t is ours to write
    in.grad = std::move(t).view(in.data.shape());
    in.grad_shared = false;
    return;
  }
  add_(in.grad, t);
}

}  // namespace luong
