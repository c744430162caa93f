// The stop-signal handlers of `luong train` (see stop_signals.h for what each signal means).
#include "framework/train/stop_signals.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace luong {
namespace {

std::atomic<int> g_stop_signal{0};
std::atomic<bool> g_signal_notes{true};
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1};

// Who sent the first stop signal (0: the kernel, as for a terminal's Ctrl-C) and when.
std::atomic<pid_t> g_first_sender{0};
std::atomic<int64_t> g_first_ns{0};

void note(const char* text, size_t length) {
  if (!g_signal_notes.load()) return;
  [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, text, length);
}

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe (POSIX)
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Async-signal-safe: atomics, clock_gettime(2), write(2) and _exit(2) only. The stop signals are blocked
// while it runs (sa_mask), so the first request is recorded whole before a second one is looked at.
void on_stop_signal(int sig, siginfo_t* info, void*) {
  const pid_t sender = info != nullptr && info->si_code <= 0 ? info->si_pid : 0;  // si_code <= 0: kill(2) & co.
  const int64_t now = monotonic_ns();
  int expected = 0;
  if (g_stop_signal.compare_exchange_strong(expected, sig)) {
    g_first_sender.store(sender);
    g_first_ns.store(now);
    static const char kNote[] =
        "\nluong: stopping after the current step, then saving a checkpoint (signal again to stop at once)\n";
    note(kNote, sizeof(kNote) - 1);
    return;
  }
  if (sender != g_first_sender.load() && now - g_first_ns.load() < int64_t{kRelayedSignalWindowSeconds} * 1000000000) {
    static const char kCopy[] =
        "\nluong: another process relayed the same stop request (a scheduler and mpirun both signal); "
        "still saving a checkpoint\n";
    note(kCopy, sizeof(kCopy) - 1);
    return;
  }
  static const char kNow[] = "\nluong: stopping now (the last checkpoint written is intact)\n";
  note(kNow, sizeof(kNow) - 1);
  _exit(128 + sig);
}

}  // namespace

void install_stop_signal_handlers(bool notes) {
  g_signal_notes.store(notes);
  struct sigaction sa {};
  sa.sa_sigaction = on_stop_signal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  for (const int s : kStopSignals) sigaddset(&sa.sa_mask, s);
  for (const int s : kStopSignals) {
    // SIGINT and SIGHUP ignored at start stay ignored: `nohup luong train` must outlive its terminal, and a
    // command a script starts with `&` ignores the script's Ctrl-C, as the shell arranged.
    struct sigaction current {};
    sigaction(s, nullptr, &current);
    if ((s == SIGINT || s == SIGHUP) && current.sa_handler == SIG_IGN) continue;
    sigaction(s, &sa, nullptr);
  }
}

void silence_stop_signal_notes() { g_signal_notes.store(false); }

bool stop_requested() { return g_stop_signal.load() != 0; }
int stop_signal() { return g_stop_signal.load(); }

}  // namespace luong
