#include "framework/nn/embedding.h"

#include "framework/ops/ops.h"

namespace luong {

Embedding::Embedding(int64_t vocab, int64_t dim, int64_t padding_idx, DType dtype)
    : vocab_(vocab), dim_(dim), padding_idx_(padding_idx) {
  LUONG_CHECK(vocab_ > 0 && dim_ > 0, "Embedding: sizes must be positive, got (", vocab_, ", ", dim_, ")");
  LUONG_CHECK(padding_idx_ < vocab_, "Embedding: padding_idx ", padding_idx_, " outside vocabulary of ", vocab_);
  weight_ = register_parameter("weight", {vocab_, dim_}, dtype);
}

Variable Embedding::forward(const Tensor& ids) const { return embedding(weight_, ids, padding_idx_); }

void Embedding::post_init() {
  if (padding_idx_ >= 0) weight_.data().select(padding_idx_).zero_();
}

}  // namespace luong
