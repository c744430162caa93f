// Every registered op, run as float32 on CUDA, matches the float64 CPU reference in its output and in the
// gradients of all its inputs; a registered op without a parity case fails the suite. The same harness
// also runs float32 on the CPU, which checks the harness and its tolerance on machines without a GPU.
#include <gtest/gtest.h>

#include "framework/ops/op_registry.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/cuda/parity_cases.h"

namespace luong::testing {
namespace {

// float32 carries ~7 digits; 1e-5 leaves room for accumulation over a few thousand terms. float64 on the
// GPU differs from the CPU only in summation order and libm, far below 1e-10.
constexpr double kFloat32Tolerance = 1e-5;
constexpr double kFloat64Tolerance = 1e-10;
constexpr uint64_t kSeed = 2024;

struct CaseResult {
  double value = 0.0;
  std::vector<Tensor> grads;  // per input, on the CPU as float64 (undefined when no gradient reached it)
};

CaseResult run_case(const ParityCase& make, Target target) {
  CaseBuilder b(target, kSeed);
  Variable out = make(b);
  out.backward();
  CaseResult r;
  r.value = out.data().item();
  for (const auto& in : b.inputs())
    r.grads.push_back(in.grad().defined() ? in.grad().to(Device::cpu()).to(DType::f64) : Tensor());
  return r;
}

// Compares the run of every case on `target` against the float64 CPU reference.
void expect_parity(Target target, double tolerance) {
  for (const auto& [name, make] : parity_cases()) {
    SCOPED_TRACE("op '" + name + "' on " + target.device.name() + " as " + dtype_name(target.dtype));
    const CaseResult ref = run_case(make, {Device::cpu(), DType::f64});
    CaseResult got;
    try {
      got = run_case(make, target);
    } catch (const Error& e) {
      ADD_FAILURE() << "threw: " << e.what();
      continue;
    }
    EXPECT_LE(max_mixed_error({got.value}, {ref.value}), tolerance) << "output " << got.value << " vs " << ref.value;
    ASSERT_EQ(got.grads.size(), ref.grads.size());
    for (size_t i = 0; i < ref.grads.size(); ++i) {
      ASSERT_EQ(got.grads[i].defined(), ref.grads[i].defined()) << "input " << i;
      if (!ref.grads[i].defined()) continue;
      EXPECT_LE(max_mixed_error(got.grads[i], ref.grads[i]), tolerance) << "gradient of input " << i;
    }
  }
}

TEST(OpParity, EveryRegisteredOpHasACudaCase) {
  const auto cases = parity_cases();
  for (const auto& name : OpRegistry::instance().names())
    EXPECT_TRUE(cases.count(name)) << "op '" << name << "' (" << OpRegistry::instance().get(name).file
                                   << ") has no CUDA parity case in tests/cuda/parity_cases_support.cpp";
}

TEST(OpParity, CpuFloat32MatchesFloat64) { expect_parity({Device::cpu(), DType::f32}, kFloat32Tolerance); }

TEST(OpParity, CudaFloat32MatchesCpuFloat64) {
  LUONG_REQUIRE_CUDA();
  expect_parity({Device::cuda(0), DType::f32}, kFloat32Tolerance);
}

TEST(OpParity, CudaFloat64MatchesCpuFloat64) {
  LUONG_REQUIRE_CUDA();
  expect_parity({Device::cuda(0), DType::f64}, kFloat64Tolerance);
}

}  // namespace
}  // namespace luong::testing
