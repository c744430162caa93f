// Helpers for data and config tests: a temp directory that removes itself, file writing, and error-message matching.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/error_of.h"
#include "tests/support/temp_dir.h"

// The statement must throw a luong::Error whose message holds every part.
#define EXPECT_ERROR_HAS(stmt, ...)                                                 \
  do {                                                                              \
    const std::string _msg = ::luong::testing::error_of([&] { stmt; });            \
    for (const char* _part : {__VA_ARGS__})                                         \
      EXPECT_NE(_msg.find(_part), std::string::npos) << "missing '" << _part << "' in: " << _msg; \
  } while (0)
