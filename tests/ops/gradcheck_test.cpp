// Every registered op passes a float64 finite-difference gradient check; a registered op without a case
// fails the suite.
#include "framework/ops/op_registry.h"
#include "tests/ops/op_cases.h"

namespace luong::testing {
namespace {

TEST(GradCheck, EveryRegisteredOpHasACase) {
  const auto cases = op_cases();
  for (const auto& name : OpRegistry::instance().names())
    EXPECT_TRUE(cases.count(name)) << "op '" << name << "' (" << OpRegistry::instance().get(name).file
                                   << ") has no gradient-check case in tests/ops/op_cases_support.cpp";
}

TEST(GradCheck, EveryOpMatchesFiniteDifferences) {
  for (const auto& [name, make] : op_cases()) {
    Generator gen(42);
    OpCase c = make(gen);
    const GradCheckResult r = gradcheck(c.f, c.inputs);
    EXPECT_LE(r.max_rel_error, 1e-6) << "op '" << name << "': " << r.worst;
  }
}

}  // namespace
}  // namespace luong::testing
