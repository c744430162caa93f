// Whole-file output: the new text replaces the old at once, nothing is left beside it, and a path that cannot be
// written is named before any work.
#include "framework/io/write_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "framework/core/error.h"
#include "tests/support/run_luong.h"

namespace luong {
namespace {

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(WriteFile, ReplacesTheOldContentsAndLeavesNoTemporaryFile) {
  const std::string dir = testing::fresh_dir("write_file"), path = dir + "/out.txt";
  write_file_atomically(path, "first\nversion\n", "test output");
  EXPECT_EQ(contents(path), "first\nversion\n");
  write_file_atomically(path, "second\n", "test output");
  EXPECT_EQ(contents(path), "second\n");
  write_file_atomically(path, "", "test output");
  EXPECT_EQ(contents(path), "");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);
}

TEST(WriteFile, UnwritablePathsAreNamed) {
  const std::string dir = testing::fresh_dir("write_file_bad");
  EXPECT_EQ(message_of([&] { check_output_path(dir + "/no/such/out.txt", "eval: --output"); }),
            "eval: --output '" + dir + "/no/such/out.txt' cannot be written: its directory " + dir +
                "/no/such does not exist");
  EXPECT_EQ(message_of([&] { write_file_atomically(dir, "x", "eval: --output"); }),
            "eval: --output '" + dir + "' cannot be written: it is a directory");
  EXPECT_NE(message_of([&] { check_output_path("", "eval: --output"); }).find("path is empty"), std::string::npos);
  check_output_path("relative_name.txt", "eval: --output");  // the current directory
}

}  // namespace
}  // namespace luong
