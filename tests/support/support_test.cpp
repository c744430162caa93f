// The test helpers themselves: a guard that failed to restore would let one test's setting leak into the next test
// of the same executable, and those tests would then measure something else without failing.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "framework/core/error.h"
#include "framework/kernels/cpu/parallel.h"
#include "tests/support/error_of.h"
#include "tests/support/random_floats.h"
#include "tests/support/scoped_setting.h"
#include "tests/support/temp_dir.h"
#include "tests/support/threads_guard.h"

namespace luong::testing {
namespace {

// A thread count other than the current one, so the guard has something to restore.
int another_thread_count() { return cpu::num_threads() == 1 ? 2 : 1; }

TEST(ThreadsGuard, RestoresTheThreadCountWhenTheScopeEndsOrThrows) {
  const int before = cpu::num_threads();
  {
    ThreadsGuard guard;
    cpu::set_num_threads(another_thread_count());
    ASSERT_NE(cpu::num_threads(), before);
  }
  EXPECT_EQ(cpu::num_threads(), before);
  EXPECT_THROW(
      {
        ThreadsGuard guard;
        cpu::set_num_threads(another_thread_count());
        throw std::runtime_error("leaves the scope early");
      },
      std::runtime_error);
  EXPECT_EQ(cpu::num_threads(), before);
}

// A process-wide switch of the engine's kind: the setter returns the value it replaces.
int the_switch = 7;
int set_the_switch(int value) {
  const int before = the_switch;
  the_switch = value;
  return before;
}

TEST(ScopedSetting, SetsTheValueForItsScopeAndRestoresTheOneBefore) {
  {
    const ScopedSetting<int> setting(set_the_switch, 3);
    EXPECT_EQ(the_switch, 3);
    {
      const ScopedSetting<int> nested(set_the_switch, 5);
      EXPECT_EQ(the_switch, 5);
    }
    EXPECT_EQ(the_switch, 3);  // the nested one restores its own predecessor, not the original
  }
  EXPECT_EQ(the_switch, 7);
  EXPECT_THROW(
      {
        const ScopedSetting<int> setting(set_the_switch, 9);
        throw std::runtime_error("leaves the scope early");
      },
      std::runtime_error);
  EXPECT_EQ(the_switch, 7);
}

TEST(TempDir, IsFreshPerTestHoldsItsFilesAndIsRemovedAfterwards) {
  std::filesystem::path where;
  {
    const TempDir dir;
    where = dir.path();
    EXPECT_TRUE(std::filesystem::is_directory(where));
    EXPECT_TRUE(std::filesystem::is_empty(where));
    EXPECT_NE(where.filename().string().find("IsFreshPerTestHoldsItsFilesAndIsRemovedAfterwards"), std::string::npos);
    const std::string bytes("a\0b\xff", 4);  // binary content survives the round trip
    const std::string path = dir.file("x.bin", bytes);
    EXPECT_EQ(path, (where / "x.bin").string());
    EXPECT_EQ(read_bytes(path), bytes);
    write_bytes(path, "shorter");
    EXPECT_EQ(read_bytes(path), "shorter");  // truncated, not overwritten in place
  }
  EXPECT_FALSE(std::filesystem::exists(where));
}

TEST(ErrorOf, ReturnsTheMessageOfALuongErrorAndSaysWhenNothingWasThrown) {
  EXPECT_NE(error_of([] { LUONG_FAIL("the named problem"); }).find("the named problem"), std::string::npos);
  EXPECT_EQ(error_of([] {}), "(no error)");
  // Another exception is not a luong error: it reaches the test instead of reading as a message.
  EXPECT_THROW(error_of([] { throw std::runtime_error("other"); }), std::runtime_error);
}

TEST(RandomFloats, ASeedGivesTheSameValuesInMinusOneToOne) {
  const auto a = random_floats(1000, 42), b = random_floats(1000, 42), c = random_floats(1000, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (float x : a) {
    EXPECT_GE(x, -1.0f);
    EXPECT_LT(x, 1.0f);
  }
}

}  // namespace
}  // namespace luong::testing
