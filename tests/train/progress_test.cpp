// The progress line's ETA is the rate of THIS process: a run resumed at step N must not spread its time
// over the N steps a previous process ran (which made a resumed run promise to finish in seconds).
#include "framework/train/progress.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

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

// A status ("validating step 40 ...") stands in for the progress line on a terminal, and the next message
// replaces it; in a log (not a terminal) it is not written at all.
TEST(ProgressLine, StatusShowsOnATerminalOnly) {
  std::FILE* log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  ProgressLine in_log(log);
  in_log.status("validating step 40 ...");
  in_log.message("validation at step 40: ppl 7.1");
  EXPECT_EQ(read_all(log), "validation at step 40: ppl 7.1\n");
  std::fclose(log);

  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) GTEST_SKIP() << "no pseudo-terminal here";
  std::FILE* terminal = std::fopen(ptsname(master), "w");
  if (terminal == nullptr) {  // a container without a devpts mount
    close(master);
    GTEST_SKIP() << "cannot open the pseudo-terminal's other side";
  }
  ProgressLine on_terminal(terminal);
  on_terminal.status("validating step 40 ...");
  on_terminal.message("validation at step 40: ppl 7.1");
  // What the terminal received (the two writes may arrive in separate reads).
  std::string shown;
  fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
  for (int i = 0; i < 200 && shown.find("ppl 7.1") == std::string::npos; ++i) {
    char buf[4096];
    const ssize_t n = read(master, buf, sizeof buf);
    if (n > 0)
      shown.append(buf, static_cast<size_t>(n));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(shown.rfind("\r\033[Kvalidating step 40 ...\r\033[Kvalidation at step 40: ppl 7.1", 0), 0u) << shown;
  std::fclose(terminal);
  close(master);
}

}  // namespace
}  // namespace luong
