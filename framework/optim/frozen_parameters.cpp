#include "framework/optim/frozen_parameters.h"

#include "framework/core/error.h"

namespace luong {

FrozenParameters::FrozenParameters(FlatParameters& params, const std::vector<size_t>& indices) {
  std::vector<bool> frozen(params.params().size(), false);
  for (size_t i : indices) {
    LUONG_CHECK(i < params.params().size(), "FrozenParameters: parameter ", i, " of ", params.params().size());
    frozen[i] = true;
  }
  for (size_t i = 0; i < frozen.size(); ++i) {
    const int64_t n = params.params()[i].data().numel();
    if (frozen[i]) {
      numel_ += n;
      Variable p = params.params()[i];
      p.set_requires_grad(false);
      frozen_.push_back(p);
    } else if (n > 0 && !trained_.empty() && trained_.back().offset + trained_.back().numel == params.offset(i)) {
      trained_.back().numel += n;  // adjacent in the buffer: one update instead of two
    } else if (n > 0) {
      trained_.push_back({params.offset(i), n});
    }
  }
}

FrozenParameters::~FrozenParameters() {
  for (Variable& p : frozen_) p.set_requires_grad(true);
}

int64_t FrozenParameters::numel() const { return numel_; }

}  // namespace luong
