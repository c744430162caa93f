#include "framework/optim/frozen_parameters.h"

#include <algorithm>

#include "framework/core/error.h"

namespace luong {

FrozenParameters::FrozenParameters(FlatParameters& params, const std::vector<size_t>& indices) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (size_t i : indices) {
    LUONG_CHECK(i < params.params().size(), "FrozenParameters: parameter ", i, " of ", params.params().size());
    spans.emplace_back(params.offset(i), params.params()[i].data().numel());
  }
  for (size_t i : indices) {
    Variable p = params.params()[i];
    if (!p.requires_grad()) continue;  // named twice
    p.set_requires_grad(false);
    frozen_.push_back(p);
  }
  std::sort(spans.begin(), spans.end());
  for (const auto& [offset, n] : spans) {
    if (n == 0) continue;
    if (!spans_.empty() && spans_.back().first + spans_.back().second == offset)
      spans_.back().second += n;  // adjacent in the buffer: one copy instead of two
    else if (spans_.empty() || spans_.back().first + spans_.back().second < offset)
      spans_.emplace_back(offset, n);
  }
}

FrozenParameters::~FrozenParameters() {
  for (Variable& p : frozen_) p.set_requires_grad(true);
}

int64_t FrozenParameters::numel() const {
  int64_t n = 0;
  for (const auto& [offset, count] : spans_) n += count;
  return n;
}

void FrozenParameters::zero_grads(FlatParameters& params) const {
  Tensor& grad = params.grad();
  for (const auto& [offset, n] : spans_) grad.narrow(offset, n).zero_();
}

void FrozenParameters::hold(const FlatParameters& params) {
  held_.clear();
  for (const auto& [offset, n] : spans_) held_.push_back(params.data().narrow(offset, n).clone());
}

void FrozenParameters::restore(FlatParameters& params) const {
  LUONG_CHECK(held_.size() == spans_.size(), "FrozenParameters::restore before hold");
  for (size_t k = 0; k < spans_.size(); ++k) {
    Tensor span = params.data().narrow(spans_[k].first, spans_[k].second);
    span.copy_(held_[k]);
  }
}

}  // namespace luong
