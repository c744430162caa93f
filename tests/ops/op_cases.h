// One gradient-check case per registered op: inputs (float64 leaves) and a scalar function of them.
// gradcheck_test.cpp fails for any registered op missing here, so a new op must bring its case.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/support/gradcheck.h"

namespace luong::testing {

struct OpCase {
  std::vector<Variable> inputs;
  std::function<Variable(const std::vector<Variable>&)> f;
};

// Builds the cases with fresh inputs from `gen` (odd sizes on purpose).
std::map<std::string, std::function<OpCase(Generator&)>> op_cases();

}  // namespace luong::testing
