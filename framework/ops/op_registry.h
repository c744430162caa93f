// Every differentiable op registers its name here (one line in its own file). The test suite iterates
// over this registry and fails for any op that has no gradient-check case, so nothing registered goes
// untested.
#pragma once
#include "framework/core/registry.h"

namespace luong {

struct OpInfo {
  const char* file;  // where the op lives, for test failure messages
};
using OpRegistry = Registry<OpInfo>;

}  // namespace luong

#define LUONG_REGISTER_OP(name) \
  static const bool LUONG_CONCAT(kLuongOpRegistered_, __COUNTER__) = ::luong::OpRegistry::instance().add(name, ::luong::OpInfo{__FILE__})
