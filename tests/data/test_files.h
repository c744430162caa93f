// Helpers for data and config tests: a temp directory that removes itself, file writing, and error-message matching.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "tests/support/temp_dir.h"

namespace luong::testing {

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
