// Child processes of a sweep: started with fork/exec in their own process group (so a terminal's Ctrl-C
// reaches only the sweep, which then stops them in order), output redirected to a log file, and told to
// stop (SIGTERM) if the sweep itself dies. Plus the sweep's own SIGINT/SIGTERM flag.
#pragma once
#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace luong::sweep {

struct ChildCommand {
  std::vector<std::string> argv;                            // argv[0] is looked up in PATH when it has no '/'
  std::string log_path;                                     // stdout and stderr, appended
  std::vector<std::pair<std::string, std::string>> env;     // set on top of the sweep's environment
};

// Starts the command; throws luong::Error when fork fails. A command that cannot be executed exits 127
// with the reason in its log.
pid_t spawn_child(const ChildCommand& cmd);

// The exit of a child: its wait status, or nullopt while it is still running.
std::optional<int> poll_child(pid_t pid);
// Blocks until the child exits; returns its wait status.
int wait_child(pid_t pid);
// "exit status 3", "killed by signal 9 (Killed)".
std::string describe_wait_status(int status);
bool exited_ok(int status);

// SIGINT / SIGTERM set a counter instead of ending the sweep (SA_RESTART off, so sleeps wake up).
void install_interrupt_handlers();
int interrupt_count();
// Sleeps up to `ms` milliseconds; a signal ends the sleep early.
void nap(int ms);

}  // namespace luong::sweep
