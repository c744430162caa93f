#include "framework/autograd/flat_parameters.h"

namespace luong {

FlatParameters::FlatParameters(std::vector<Variable> params, Device device) : params_(std::move(params)) {
  LUONG_CHECK(!params_.empty(), "FlatParameters: no parameters");
  const DType dtype = params_[0].dtype();
  int64_t total = 0;
  for (const auto& p : params_) {
    LUONG_CHECK(p.dtype() == dtype, "FlatParameters: parameter '", p.name(), "' is ", p.dtype(), " but '",
                params_[0].name(), "' is ", dtype, " (one buffer needs one dtype)");
    offsets_.push_back(total);
    total += p.data().numel();
  }
  data_ = Tensor::empty({total}, dtype, device);
  grad_ = Tensor::zeros({total}, dtype, device);
  for (size_t i = 0; i < params_.size(); ++i) {
    VariableImpl& impl = *params_[i].impl();
    const int64_t n = impl.data.numel();
    Tensor slot = data_.narrow(offsets_[i], n).view(impl.data.shape());
    slot.copy_(impl.data);
    impl.data = slot;
    impl.grad = grad_.narrow(offsets_[i], n).view(impl.data.shape());
    impl.requires_grad = true;
    impl.is_parameter = true;
  }
}

void FlatParameters::zero_grad() {
  for (const auto& p : params_) p.impl()->grad_zero_pending = true;
}

Tensor FlatParameters::grad_span(FlatSpan span) {
  LUONG_CHECK(span.offset >= 0 && span.numel >= 0 && span.offset + span.numel <= numel(), "FlatParameters: span [",
              span.offset, ", ", span.offset + span.numel, ") outside the ", numel(), " parameters");
  const int64_t end = span.offset + span.numel;
  for (size_t i = 0; i < params_.size(); ++i) {
    const int64_t first = offsets_[i], last = first + params_[i].data().numel();
    if (first < end && last > span.offset) read_grad(*params_[i].impl());
  }
  return grad_.narrow(span.offset, span.numel);
}

void FlatParameters::write_pending_zeros() const {
  for (const auto& p : params_) read_grad(*p.impl());
}

}  // namespace luong
