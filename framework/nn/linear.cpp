#include "framework/nn/linear.h"

#include "framework/ops/ops.h"

namespace luong {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, DType dtype)
    : in_(in_features), out_(out_features) {
  LUONG_CHECK(in_ > 0 && out_ > 0, "Linear: sizes must be positive, got (", in_, ", ", out_, ")");
  weight_ = register_parameter("weight", {in_, out_}, dtype);
  if (bias) bias_ = register_parameter("bias", {out_}, dtype);
}

Variable Linear::forward(const Variable& x) const {
  LUONG_CHECK(x.dim() >= 1 && x.size(-1) == in_, "Linear(", in_, ", ", out_, "): input ", shape_str(x.shape()),
              " does not end in ", in_);
  Variable y = matmul(x, weight_);
  return bias_.defined() ? add(y, bias_) : y;
}

}  // namespace luong
