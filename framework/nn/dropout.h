// Dropout as a module: inverted dropout with probability p in training mode, the identity in eval mode.
// The mask comes from a Generator the caller owns, so a checkpoint can save and restore its stream.
#pragma once
#include "framework/nn/module.h"

namespace luong {

class Dropout : public Module {
 public:
  explicit Dropout(double p);
  Variable forward(const Variable& x, Generator& gen) const;
  // gen may be null only when no mask is drawn (eval mode or p == 0).
  Variable forward(const Variable& x, Generator* gen) const;
  double p() const { return p_; }
  bool active() const { return is_training() && p_ > 0.0; }

 private:
  double p_;
};

}  // namespace luong
