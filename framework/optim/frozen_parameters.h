// train.freeze: parameters that training leaves exactly as they are (a trained encoder kept while a decoder
// learns a new language, embeddings fixed as Zoph et al. 2016 fix the target side, Marian's
// --embedding-fix-src). Their gradients are turned off (Variable::set_requires_grad) while this object lives,
// so backward computes none for them, nor the work that only they needed: a frozen encoder's whole backward,
// a frozen embedding's scatter, a frozen LSTM's weight GEMMs (PyTorch's requires_grad_(False)). Their slots of
// the flat gradient therefore stay zero, so the step's norm, clipping and the logged norm see the trained
// parameters alone; and the optimizer updates the trained spans only (Optimizer::step's `only`), so nothing
// writes a frozen value, weight decay included, and their optimizer state stays as it was.
#pragma once
#include <cstdint>
#include <vector>

#include "framework/autograd/flat_parameters.h"

namespace luong {

class FrozenParameters {
 public:
  // `indices` into params.params(). Turns the frozen parameters' gradients off, and back on when destroyed.
  FrozenParameters(FlatParameters& params, const std::vector<size_t>& indices);
  ~FrozenParameters();
  FrozenParameters(const FrozenParameters&) = delete;
  FrozenParameters& operator=(const FrozenParameters&) = delete;

  int64_t numel() const;
  // The spans of the flat buffers outside the frozen parameters, neighbours merged: what the optimizer updates.
  const std::vector<FlatSpan>& trained_spans() const { return trained_; }

 private:
  int64_t numel_ = 0;
  std::vector<FlatSpan> trained_;
  std::vector<Variable> frozen_;  // their gradients are off while this object lives
};

}  // namespace luong
