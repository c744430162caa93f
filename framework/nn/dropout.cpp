#include "framework/nn/dropout.h"

#include "framework/ops/ops.h"

namespace luong {

Dropout::Dropout(double p) : p_(p) {
  LUONG_CHECK(p_ >= 0.0 && p_ < 1.0, "Dropout: p must be in [0, 1), got ", p_);
}

Variable Dropout::forward(const Variable& x, Generator& gen) const { return dropout(x, p_, gen, is_training()); }

Variable Dropout::forward(const Variable& x, Generator* gen) const {
  if (!active()) return x;
  LUONG_CHECK(gen != nullptr, "Dropout(p=", p_, ") in training mode needs a generator (pass one, or call eval())");
  return dropout(x, p_, *gen, true);
}

}  // namespace luong
