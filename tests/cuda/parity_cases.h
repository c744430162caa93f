// Device parity cases: one per registered op, each a scalar function built on a Target (device, dtype), so
// the same case runs as float64 on the CPU (the reference) and as float32 on CUDA. Sizes are odd and large
// enough to reach the multi-block paths of the CUDA kernels (the gradient-check cases in tests/ops are
// tiny, and their constants live on the CPU, so they cannot be reused here).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "framework/autograd/variable.h"
#include "framework/core/philox.h"

namespace luong::testing {

struct Target {
  Device device;
  DType dtype;
};

// Builds a case's inputs and constants on the target. Two builders with the same seed draw the same values
// in the same order, so the CPU and CUDA runs of a case see the same numbers (up to float32 rounding).
class CaseBuilder {
 public:
  CaseBuilder(Target target, uint64_t seed) : target_(target), gen_(seed) {}

  // An input in [lo, hi) that requires a gradient; its gradient is compared.
  Variable leaf(const Shape& shape, double lo = -1.0, double hi = 1.0);
  // A uint8 tensor of 0/1 values (softmax masks: 1 = keep; masked_fill masks: 1 = fill).
  Tensor mask(const std::vector<double>& values, const Shape& shape) const;
  // Random 0/1 values, 1 with probability keep.
  std::vector<double> random_bits(int64_t n, double keep);
  Tensor ids(const std::vector<int64_t>& values, const Shape& shape) const;
  // sum(y * w) with fixed random weights w on the target: every output element gets its own gradient.
  Variable weighted_sum(const Variable& y, uint64_t seed = 99) const;

  const Target& target() const { return target_; }
  const std::vector<Variable>& inputs() const { return inputs_; }
  Generator& gen() { return gen_; }

 private:
  Target target_;
  Generator gen_;
  std::vector<Variable> inputs_;
};

using ParityCase = std::function<Variable(CaseBuilder&)>;
std::map<std::string, ParityCase> parity_cases();

}  // namespace luong::testing
