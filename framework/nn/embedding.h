// Embedding: a (vocab, dim) table looked up by int64 ids. The padding row is zero after initialisation
// and never receives a gradient, so padding positions contribute nothing.
#pragma once
#include "framework/nn/module.h"

namespace luong {

class Embedding : public Module {
 public:
  // padding_idx < 0: no padding row.
  Embedding(int64_t vocab, int64_t dim, int64_t padding_idx = -1, DType dtype = DType::f32);
  // ids int64 (...) -> (..., dim)
  Variable forward(const Tensor& ids) const;
  const Variable& weight() const { return weight_; }  // (vocab, dim)
  int64_t vocab() const { return vocab_; }
  int64_t dim() const { return dim_; }
  int64_t padding_idx() const { return padding_idx_; }

 protected:
  void post_init() override;

 private:
  int64_t vocab_, dim_, padding_idx_;
  Variable weight_;  // (vocab, dim)
};

}  // namespace luong
