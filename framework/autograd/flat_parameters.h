// Parameters and their gradients in two contiguous buffers. Each parameter's data and grad become views
// into them, so all-reduce, clipping, the optimizer and checkpoints each work on one flat span, and a
// gradient lands directly in the buffer that will be communicated.
#pragma once
#include <string>
#include <vector>

#include "framework/autograd/variable.h"

namespace luong {

// A contiguous range of the flat buffers: elements [offset, offset + numel).
struct FlatSpan {
  int64_t offset = 0;
  int64_t numel = 0;
  bool operator==(const FlatSpan&) const = default;
};

class FlatParameters {
 public:
  FlatParameters() = default;
  // Moves the parameters' current values into one buffer on `device` (same dtype for all), and points each
  // parameter's data and grad at its slice. Parameter order is the order given (it defines the layout).
  FlatParameters(std::vector<Variable> params, Device device);

  Tensor& data() { return data_; }  // (total,)
  const Tensor& data() const { return data_; }
  // (total,): parameters whose zero is still pending (zero_grad) are zeroed first, so a reader sees final values.
  Tensor& grad() {
    write_pending_zeros();
    return grad_;
  }
  const Tensor& grad() const {
    write_pending_zeros();
    return grad_;
  }
  // Elements [span.offset, span.offset + span.numel) of the gradient, with the pending zeros of the parameters
  // that overlap it written first, and only theirs: a reader of part of the buffer (a bucket's all-reduce, the
  // clip and update of the trained spans) must not zero the rest, whose first contributions of this pass, still
  // to come, would then be added to zeros instead of written, nor write frozen slots that nothing reads.
  Tensor grad_span(FlatSpan span);
  const std::vector<Variable>& params() const { return params_; }
  int64_t offset(size_t i) const { return offsets_[i]; }  // element offset of parameter i
  int64_t numel() const { return data_.defined() ? data_.numel() : 0; }
  // Zeroes the gradients lazily, as PyTorch's zero_grad(set_to_none=True) does: each parameter's slice is
  // marked (VariableImpl::grad_zero_pending) and the first contribution of the next backward pass overwrites
  // it, instead of a pass over the whole buffer (34 MB on the benchmark model) and the reads of its zeros.
  void zero_grad();

 private:
  void write_pending_zeros() const;

  std::vector<Variable> params_;
  std::vector<int64_t> offsets_;
  Tensor data_, grad_;
};

}  // namespace luong
