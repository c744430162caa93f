// Linear: y = x W + b. W is stored (in, out) so the forward is one GEMM over all leading dims of x with no
// transpose (note: the transpose of PyTorch's layout).
#pragma once
#include "framework/nn/module.h"

namespace luong {

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, DType dtype = DType::f32);
  // x (..., in) -> (..., out)
  Variable forward(const Variable& x) const;
  const Variable& weight() const { return weight_; }  // (in, out)
  const Variable& bias() const { return bias_; }      // (out), undefined without bias
  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }

 private:
  int64_t in_, out_;
  Variable weight_;  // (in, out)
  Variable bias_;    // (out)
};

}  // namespace luong
