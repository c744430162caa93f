// train.freeze: parameters that training leaves exactly as they are (a trained encoder kept while a decoder
// learns a new language, embeddings fixed as Zoph et al. 2016 fix the target side, Marian's
// --embedding-fix-src). Their gradients are turned off (Variable::set_requires_grad) while this object lives,
// so backward computes none for them, nor the work that only they needed: a frozen encoder's whole backward,
// a frozen embedding's scatter, a frozen LSTM's weight GEMMs (PyTorch's requires_grad_(False)). Their slots
// of the flat gradient are zeroed before the step's norm is measured, so clipping, the logged norm and the
// optimizer's state see the trained parameters alone; and their values are put back after each update,
// because weight decay moves a parameter without a gradient (AdamW's p -= lr wd p, SGD's L2 term). The copy
// makes "frozen" exact whatever the optimizer does, for the frozen values' memory once.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "framework/autograd/flat_parameters.h"

namespace luong {

class FrozenParameters {
 public:
  // `indices` into params.params(); neighbouring parameters become one span of the flat buffers. Turns the
  // frozen parameters' gradients off, and back on when destroyed.
  FrozenParameters(FlatParameters& params, const std::vector<size_t>& indices);
  ~FrozenParameters();
  FrozenParameters(const FrozenParameters&) = delete;
  FrozenParameters& operator=(const FrozenParameters&) = delete;

  int64_t numel() const;
  // Zeroes the frozen spans of the gradient.
  void zero_grads(FlatParameters& params) const;
  // Copies the frozen values as they are now (at the start, or once a resume has loaded them).
  void hold(const FlatParameters& params);
  // Writes the held values back (after an optimizer step).
  void restore(FlatParameters& params) const;

 private:
  std::vector<std::pair<int64_t, int64_t>> spans_;  // (offset, numel) in the flat buffers
  std::vector<Tensor> held_;
  std::vector<Variable> frozen_;  // their gradients are off while this object lives
};

}  // namespace luong
