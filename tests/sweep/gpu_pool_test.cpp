// The GPUs a sweep shares out: taking and giving back ids in pool order, and the id lists --gpus and the spec's
// gpus: accept.
#include "framework/sweep/gpu_pool.h"

#include <gtest/gtest.h>

#include "framework/core/error.h"

namespace luong::sweep {
namespace {

using Ids = std::vector<std::string>;

TEST(GpuPool, TakesFreeIdsInPoolOrderAndGetsThemBack) {
  GpuPool pool({"3", "1", "2", "0"});
  EXPECT_TRUE(pool.enabled());
  EXPECT_EQ(pool.free(), 4u);
  EXPECT_EQ(pool.take(2), (Ids{"3", "1"}));
  EXPECT_EQ(pool.take(1), (Ids{"2"}));
  EXPECT_FALSE(pool.take(2).has_value()) << "one is free, two asked";
  EXPECT_EQ(pool.free(), 1u) << "a refused take takes nothing";
  pool.give_back({"1"});
  EXPECT_EQ(pool.take(2), (Ids{"1", "0"}));
  pool.give_back({"3", "7"});  // 7 was never in the pool
  EXPECT_EQ(pool.free(), 1u);
  EXPECT_EQ(visible_devices({"1", "0"}), "1,0");
  EXPECT_FALSE(GpuPool().enabled());
}

TEST(GpuPool, ParsesIdListsAndRefusesBadOnes) {
  EXPECT_EQ(parse_gpu_list("0,1, 2", "--gpus"), (Ids{"0", "1", "2"}));
  EXPECT_EQ(parse_gpu_list("GPU-8f2c1e3a-9b7d", "--gpus"), (Ids{"GPU-8f2c1e3a-9b7d"}));
  const auto error_of = [](const std::string& text) -> std::string {
    try {
      parse_gpu_list(text, "--gpus");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of("0,1,0"), "--gpus: GPU 0 is listed twice");
  EXPECT_EQ(error_of("0,,1"), "--gpus: an empty GPU id (expected ids such as 0,1,2 or GPU-UUIDs)");
  EXPECT_EQ(error_of(""), "--gpus: an empty GPU id (expected ids such as 0,1,2 or GPU-UUIDs)");
  EXPECT_EQ(error_of("0;1"), "--gpus: '0;1' is not a GPU id (an index such as 0, or a GPU-UUID)");
}

}  // namespace
}  // namespace luong::sweep
