// The progress line's ETA is the rate of THIS process: a run resumed at step N must not spread its time
// over the N steps a previous process ran (which made a resumed run promise to finish in seconds).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "framework/train/progress.h"

namespace luong {
namespace {

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s.push_back(static_cast<char>(c));
  return s;
}

TEST(ProgressLine, EtaOfAResumedRunUsesOnlyItsOwnSteps) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressLine p(f);
  p.update({1, 1000, 2000, 2.0, 0.1, 100.0, 1.0});  // resumed at step 1000: no rate yet
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  p.update({1, 1001, 2000, 2.0, 0.1, 100.0, 1.0});  // one step in >= 60 ms, 999 to go: >= 59 s
  const std::string out = read_all(f);
  std::fclose(f);
  const size_t first_nl = out.find('\n');
  ASSERT_NE(first_nl, std::string::npos) << out;
  EXPECT_EQ(out.substr(0, first_nl).find("ETA"), std::string::npos) << out;
  const size_t eta = out.rfind("ETA ");
  ASSERT_NE(eta, std::string::npos) << out;
  const std::string t = out.substr(eta + 4, 7);  // h:mm:ss
  const int seconds = std::stoi(t.substr(0, 1)) * 3600 + std::stoi(t.substr(2, 2)) * 60 + std::stoi(t.substr(5, 2));
  EXPECT_GE(seconds, 59) << out;
}

}  // namespace
}  // namespace luong
