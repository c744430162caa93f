// Runs `luong bleu` through the binary, as a user's shell would, for the command-level tests.
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace luong::testing {

struct RunResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

// 'path' for the shell (built by appending: GCC 12 warns falsely on chains of string operator+).
inline std::string quoted(const std::string& path) {
  std::string q = "'";
  q.append(path).append("'");
  return q;
}

// `luong bleu ARGS < STDIN_FILE`, in directory `dir` when one is given (relative system names, as sacrebleu's).
inline RunResult run(const std::string& args, const std::string& stdin_file, const std::string& dir = "") {
  std::string cmd;
  if (!dir.empty()) cmd.append("cd ").append(quoted(dir)).append(" && ");
  cmd.append(LUONG_BINARY).append(" bleu ").append(args).append(" < ").append(quoted(stdin_file)).append(" 2>&1");
  RunResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace luong::testing
