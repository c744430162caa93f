#include "framework/sweep/trial_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>

#include "framework/core/error.h"

extern char** environ;

namespace luong::sweep {
namespace {

std::atomic<int> g_interrupts{0};
void on_interrupt(int) { g_interrupts.fetch_add(1); }

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

pid_t spawn_child(const ChildCommand& cmd) {
  LUONG_CHECK(!cmd.argv.empty(), "spawn_child: empty command");
  // Everything the child needs is built before fork: between fork and exec only async-signal-safe calls.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : cmd.env) env[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = cmd.argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::string exec_failed = "luong sweep: cannot execute '" + cmd.argv[0] + "': ";
  const pid_t parent = getpid();

  // SIGINT and SIGTERM stay blocked across fork until the child has dropped the sweep's handlers: one sent to
  // the new child in between (the sweep stopping it the moment it started) would run the sweep's handler in the
  // child's copy of the sweep and be lost, and the trial would train on. Blocked, it waits and then acts.
  sigset_t stops, before;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  sigprocmask(SIG_BLOCK, &stops, &before);
  const pid_t pid = fork();
  if (pid != 0) {
    const int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &before, nullptr);  // the sweep's own stops, held meanwhile, arrive now
    if (pid < 0) LUONG_FAIL("luong sweep: fork failed: ", std::strerror(fork_errno));
    return pid;
  }

  // Child.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  sigprocmask(SIG_SETMASK, &before, nullptr);  // a stop already sent ends the child here
  setpgid(0, 0);
  // The sweep dying (even by SIGKILL) must not leave trainers running on the same run directories.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(143);  // the sweep died before prctl took effect
  const int in = open("/dev/null", O_RDONLY);
  if (in >= 0) dup2(in, 0);
  const int out = open(cmd.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (out < 0) _exit(126);
  dup2(out, 1);
  dup2(out, 2);
  if (cmd.argv[0].find('/') == std::string::npos) {
    // execvpe searches PATH of the sweep; the environment is still the one built above.
    execvpe(argv[0], argv.data(), envp.data());
  } else {
    execve(argv[0], argv.data(), envp.data());
  }
  write_all(2, exec_failed + std::strerror(errno) + "\n");
  _exit(127);
}

std::optional<int> poll_child(pid_t pid) {
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r == 0) return std::nullopt;
    if (errno == EINTR) continue;
    LUONG_FAIL("luong sweep: waitpid(", pid, ") failed: ", std::strerror(errno));
  }
}

int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) LUONG_FAIL("luong sweep: waitpid(", pid, ") failed: ", std::strerror(errno));
  }
  return status;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return str("exit status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return str("killed by signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")");
  return str("wait status ", status);
}

bool exited_ok(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a sleeping sweep wakes up at once
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int interrupt_count() { return g_interrupts.load(); }

void nap(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

}  // namespace luong::sweep
