// Helpers for data and config tests: a temp directory that removes itself, file writing, and error-message matching.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "framework/core/error.h"

namespace luong::testing {

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("luong_test_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name, const std::string& content) const {
    const auto p = path_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// The message of the luong::Error `f` throws (fails the test if it throws nothing or something else).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected luong::Error";
  return {};
}

}  // namespace luong::testing

#define EXPECT_ERROR_HAS(stmt, ...)                                                 \
  do {                                                                              \
    const std::string _msg = ::luong::testing::error_of([&] { stmt; });            \
    for (const char* _part : {__VA_ARGS__})                                         \
      EXPECT_NE(_msg.find(_part), std::string::npos) << "missing '" << _part << "' in: " << _msg; \
  } while (0)
