// kernels/kernel_profile: with LUONG_PROFILE's switch on, every CPU kernel an op calls through LUONG_KERNEL is
// counted under its name (template arguments dropped, so every call site of a kernel shares one row) and its
// time summed; off, nothing is recorded. Checked through real ops, so a dispatch macro that stopped timing its
// calls would fail here.
#include "framework/kernels/kernel_profile.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "framework/autograd/variable.h"
#include "framework/kernels/profile_table.h"
#include "framework/ops/ops.h"
#include "framework/tensor/tensor.h"

namespace luong {
namespace {

class KernelProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    before_ = set_kernel_profile_enabled(true);
    reset_kernel_profile();
  }
  void TearDown() override {
    set_kernel_profile_enabled(before_);
    reset_kernel_profile();
  }
  bool before_ = false;
};

const KernelProfileRow* find(const std::vector<KernelProfileRow>& rows, const std::string& name) {
  for (const KernelProfileRow& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

TEST_F(KernelProfileTest, CountsEveryOpsKernelCallUnderItsName) {
  const Variable a(Tensor::full({64, 64}, 0.5)), b(Tensor::full({64, 64}, 0.25));
  Variable c = matmul(a, b);
  c = matmul(c, b);
  Variable t = tanh(c);
  const std::vector<KernelProfileRow> rows = kernel_profile_rows();
  const KernelProfileRow* gemm = find(rows, "gemm");
  ASSERT_NE(gemm, nullptr) << kernel_profile_table();
  EXPECT_EQ(gemm->calls, 2);
  EXPECT_GT(gemm->seconds, 0.0);
  const KernelProfileRow* unary = find(rows, "unary_forward");
  ASSERT_NE(unary, nullptr) << kernel_profile_table();
  EXPECT_EQ(unary->calls, 1);
  for (const KernelProfileRow& r : rows) EXPECT_EQ(r.name.find('<'), std::string::npos) << r.name;
  const std::string table = kernel_profile_table();
  EXPECT_NE(table.find("| gemm | 2 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| all |"), std::string::npos) << table;
}

// Several processes of one job print to one stderr: each heading names its rank (from the launcher's environment
// here, as mpirun sets it).
TEST(ProfileHeading, NamesTheRankInAJobOfSeveralProcesses) {
  EXPECT_EQ(profile_heading("CPU kernel profile"), "CPU kernel profile (LUONG_PROFILE):");
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  const std::string heading = profile_heading("CPU GEMM profile");
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(heading, "CPU GEMM profile (LUONG_PROFILE, rank 3 of 4):");
}

TEST_F(KernelProfileTest, RecordsNothingWhenOff) {
  set_kernel_profile_enabled(false);
  const Variable a(Tensor::full({8, 8}, 1.0));
  Variable c = tanh(matmul(a, a));
  EXPECT_TRUE(kernel_profile_rows().empty());
}

}  // namespace
}  // namespace luong
