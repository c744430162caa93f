#include "framework/optim/optimizer.h"

#include <cmath>

#include "framework/ops/tensor_math.h"
#include "framework/optim/state_access.h"

namespace luong {

void Optimizer::prepare_buffers(const FlatParameters& params) {
  const Tensor& data = params.data();
  const std::vector<std::string> names = buffer_names();
  if (buffers_.empty()) {
    for (size_t i = 0; i < names.size(); ++i) buffers_.push_back(Tensor::zeros({data.numel()}, data.dtype(), data.device()));
    return;
  }
  // Buffers restored by load_state: they must fit these parameters; dtype and device follow the parameters.
  for (size_t i = 0; i < buffers_.size(); ++i) {
    Tensor& b = buffers_[i];
    LUONG_CHECK(b.numel() == data.numel(), "optimizer '", name_, "': state buffer '", names[i], "' has ",
                b.numel(), " elements but the parameters have ", data.numel());
    if (b.dtype() != data.dtype()) b = b.to(data.dtype());
    if (!(b.device() == data.device())) b = b.to(data.device());
  }
}

void Optimizer::step(FlatParameters& params, double lr, double grad_scale, std::span<const FlatSpan> only) {
  LUONG_CHECK(params.numel() > 0, "optimizer '", name_, "': no parameters");
  LUONG_CHECK(std::isfinite(lr) && lr >= 0, "optimizer '", name_, "': learning rate must be finite and >= 0, got ", lr);
  LUONG_CHECK(std::isfinite(grad_scale) && grad_scale >= 0, "optimizer '", name_,
              "': gradient scale must be finite and >= 0, got ", grad_scale);
  prepare_buffers(params);
  ++step_;
  if (only.empty()) {
    update(params.data(), params.grad(), grad_scale, buffers_, lr, step_);
    return;
  }
  // The updates are elementwise (and computed without FMA contraction), so a span's elements get exactly the
  // bits a whole-buffer update would give them.
  for (const FlatSpan& s : only) {
    LUONG_CHECK(s.offset >= 0 && s.numel > 0 && s.offset + s.numel <= params.numel(), "optimizer '", name_, "': span [",
                s.offset, ", ", s.offset + s.numel, ") outside the ", params.numel(), " parameters");
    Tensor param = params.data().narrow(s.offset, s.numel);
    std::vector<Tensor> buffers;
    for (const Tensor& b : buffers_) buffers.push_back(b.narrow(s.offset, s.numel));
    // grad_span: the frozen slots between the spans are not zeroed, nor read.
    update(param, params.grad_span(s), grad_scale, buffers, lr, step_);
  }
}

void Optimizer::state_view(StateDict& out) const {
  out.strings["name"] = name_;
  out.ints["step"] = step_;
  const std::vector<std::string> names = buffer_names();
  for (size_t i = 0; i < buffers_.size(); ++i) out.tensors[names[i]] = buffers_[i];
}

void Optimizer::state(StateDict& out) const {
  StateDict view;
  state_view(view);
  for (auto& [name, t] : view.tensors) t = t.clone();
  out.merge(view, "");
}

void Optimizer::load_state(const StateDict& in) {
  optim_detail::check_name(in, "optimizer", name_);
  const std::string who = "optimizer '" + name_ + "'";
  const int64_t step = optim_detail::require(in.ints, in, "step", who);
  LUONG_CHECK(step >= 0, who, " state: negative step ", step);
  std::vector<Tensor> buffers;
  // Before the first step there are no buffers yet; after it, every buffer must be present.
  if (step > 0)
    for (const auto& n : buffer_names()) {
      buffers.push_back(optim_detail::require(in.tensors, in, n, who).clone());
      // Never written by luong (a diverged step is skipped, a non-finite state never saved): a damaged file.
      const DType dt = buffers.back().dtype();
      LUONG_CHECK(dt == DType::f32 || dt == DType::f64 || dt == DType::bf16, who, " state '", n, "' is stored as ", dt,
                  "; expected floating point");
      LUONG_CHECK(!has_non_finite(dt == DType::bf16 ? buffers.back().to(DType::f32) : buffers.back()), who, " state '",
                  n, "' holds NaN or infinite values");
    }
  step_ = step;
  buffers_ = std::move(buffers);
}

std::unique_ptr<Optimizer> make_optimizer(const std::string& name, const OptimizerOptions& options) {
  const auto& reg = OptimizerRegistry::instance();
  if (!reg.contains(name))
    LUONG_FAIL("unknown optimizer '", name, "' (registered: ", optim_detail::join(reg.names()), ")");
  return reg.get(name)(options);
}

}  // namespace luong
