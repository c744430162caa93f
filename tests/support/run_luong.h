// Running the luong binary from tests: output capture, exit status, and a kill at a chosen moment.
#pragma once
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace luong::testing {

struct RunResult {
  int status = -1;  // exit code, or 128 + signal
  std::string output;
};

// Runs a shell command line, capturing stdout (and stderr where the command merges it).
inline RunResult run_luong_shell(const std::string& command) {
  RunResult r;
  FILE* p = popen(command.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

// Runs `luong <args>` through the shell with stderr merged into stdout; `stdin_text`, when given, is
// piped to its standard input.
inline RunResult run_luong(const std::string& args, const std::string& stdin_text = "") {
  std::string cmd = std::string(LUONG_BINARY) + " " + args + " 2>&1";
  if (!stdin_text.empty()) cmd = "printf '%s\\n' '" + stdin_text + "' | " + cmd;
  return run_luong_shell(cmd);
}

// Starts `luong <args>` (output to log_path) and SIGKILLs it as soon as `kill_now()` returns true (polled
// every 2 ms). Reports whether it was still running (false = it had already finished).
inline bool run_luong_and_kill_when(const std::string& args, const std::function<bool()>& kill_now,
                                    const std::string& log_path) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = "exec " + std::string(LUONG_BINARY) + " " + args + " > " + log_path + " 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int st = 0;
  while (!kill_now()) {
    if (waitpid(pid, &st, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  return true;
}

// Starts `command` through /bin/sh in a child process and returns its pid, so a test can signal it while it
// runs. `exec` keeps the signal dispositions as they are here: a command that `sh` put in the background
// (`&`) would start with SIGINT ignored, and no Ctrl-C could be tested through it.
inline pid_t start_shell_command(const std::string& command) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = "exec " + command;
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Waits for a child started by start_shell_command: its exit code, or 128 + the signal that killed it.
inline int wait_exit_status(pid_t pid) {
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// The directories fresh_dir made in this process, removed when it exits: several tests of a process may share
// one (a generated corpus), so no single test can own it, and ctest runs every test in a process of its own.
// Without this each run of the suite left about a hundred directories in the temp dir. Set
// LUONG_KEEP_TEST_DIRS=1 to keep them for a post-mortem. Children forked by the tests exec or _exit, so they
// never run this.
class FreshDirs {
 public:
  static FreshDirs& instance() {
    static FreshDirs dirs;
    return dirs;
  }
  void add(const std::filesystem::path& p) { paths_.push_back(p); }
  ~FreshDirs() {
    if (std::getenv("LUONG_KEEP_TEST_DIRS")) return;
    for (const auto& p : paths_) {
      std::error_code ignored;  // best effort: a directory already gone is fine
      std::filesystem::remove_all(p, ignored);
    }
  }

 private:
  std::vector<std::filesystem::path> paths_;
};

// A fresh, empty directory under the system temp dir, removed when the process exits.
inline std::string fresh_dir(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() / ("luong_test_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  FreshDirs::instance().add(p);
  return p.string();
}

// A path for a command's output log, in a fresh directory of its own (removed with the others): a log beside a
// run directory would outlive it.
inline std::string fresh_log_path(const std::string& name) { return fresh_dir(name + "_log") + "/output.log"; }

// `luong train` with configs/tiny.yaml on the toy corpus in `data_dir` (generated_corpus: its training and
// validation files; the test files are left to the config), writing `run_dir`. Callers append their options.
inline std::string tiny_train_command(const std::string& run_dir, const std::string& data_dir) {
  return "train --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml --run-dir " + run_dir +
         " --set data.train_src=" + data_dir + "/train.src --set data.train_tgt=" + data_dir + "/train.tgt" +
         " --set data.valid_src=" + data_dir + "/valid.src --set data.valid_tgt=" + data_dir + "/valid.tgt";
}

// A fresh directory holding a toy corpus made by `luong gen-data` ({train,valid,test}.{src,tgt}); `sizes` are
// gen-data's options (e.g. "--train 300 --valid 20 --test 10"). For a test suite's SetUpTestSuite.
inline std::string generated_corpus(const std::string& name, const std::string& sizes) {
  const std::string dir = fresh_dir(name);
  const RunResult r = run_luong("gen-data --out " + dir + " " + sizes);
  EXPECT_EQ(r.status, 0) << r.output;
  return dir;
}

}  // namespace luong::testing
