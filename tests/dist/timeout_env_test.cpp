// LUONG_DIST_TIMEOUT_S: read as seconds, with the cap of dist.timeout_s (one week). Larger values overflowed
// the millisecond count into a negative timeout, and the watchdog fired at once on every rank.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "framework/core/error.h"
#include "framework/dist/process_group.h"

namespace luong::testing {
namespace {

// Sets LUONG_DIST_TIMEOUT_S for one test and restores the value it had.
class TimeoutEnv {
 public:
  explicit TimeoutEnv(const char* value) {
    if (const char* old = std::getenv(kName)) old_ = old;
    setenv(kName, value, 1);
  }
  ~TimeoutEnv() {
    if (old_) setenv(kName, old_->c_str(), 1);
    else unsetenv(kName);
  }

 private:
  static constexpr const char* kName = "LUONG_DIST_TIMEOUT_S";
  std::optional<std::string> old_;
};

std::string timeout_error(const char* value) {
  TimeoutEnv env(value);
  try {
    default_collective_timeout();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TimeoutEnv, SecondsUpToOneWeek) {
  TimeoutEnv env("604800");
  EXPECT_EQ(default_collective_timeout(), std::chrono::milliseconds(604800000));
}

TEST(TimeoutEnv, LargerValuesAreRefusedWithTheRange) {
  for (const char* v : {"604801", "9300000000000000", "1e300", "inf"})
    EXPECT_NE(timeout_error(v).find(std::string("LUONG_DIST_TIMEOUT_S='") + v +
                                    "' is out of range: expected seconds in (0, 604800]"),
              std::string::npos)
        << v << " -> " << timeout_error(v);
  EXPECT_NE(timeout_error("0").find("is not a positive number of seconds"), std::string::npos);
}

}  // namespace
}  // namespace luong::testing
