// Parameter initialisers, registered by name (model.init in configs). Each fills a CPU float tensor from a
// Philox generator, so a model built from the same seed has the same weights on any machine.
#pragma once
#include <functional>

#include "framework/core/philox.h"
#include "framework/core/registry.h"
#include "framework/tensor/tensor.h"

namespace luong {

// Fills `t` (float32 or float64, on the CPU) in place; `range` is the initialiser's scale parameter.
using Initializer = std::function<void(Tensor& t, double range, Generator& gen)>;
using InitRegistry = Registry<Initializer>;

}  // namespace luong

#define LUONG_REGISTER_INIT(name, fn, help)                            \
  static const bool LUONG_CONCAT(kLuongInitRegistered_, __COUNTER__) = \
      ::luong::InitRegistry::instance().add(name, fn, help)
