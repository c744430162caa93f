#include "framework/kernels/kernel_profile.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace luong {
namespace {

struct Profile {
  std::atomic<bool> enabled{profile_requested_by_environment()};
  std::mutex mutex;
  std::map<std::string, KernelProfileRow> rows;

  // At exit, when anything was timed: the table, on stderr so it never mixes into a command's output.
  ~Profile() {
    if (rows.empty()) return;
    const std::string table = kernel_profile_table();
    std::fprintf(stderr, "\nCPU kernel profile (LUONG_PROFILE):\n%s", table.c_str());
  }
};

Profile& profile() {
  static Profile p;
  return p;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

bool profile_requested_by_environment() {
  const char* env = std::getenv("LUONG_PROFILE");
  return env != nullptr && env[0] != '\0' && std::strcmp(env, "0") != 0;
}

bool kernel_profile_enabled() { return profile().enabled.load(std::memory_order_relaxed); }

bool set_kernel_profile_enabled(bool on) { return profile().enabled.exchange(on); }

std::vector<KernelProfileRow> kernel_profile_rows() {
  Profile& p = profile();
  std::vector<KernelProfileRow> out;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    for (const auto& [name, row] : p.rows) out.push_back(row);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const KernelProfileRow& x, const KernelProfileRow& y) { return x.seconds > y.seconds; });
  return out;
}

void reset_kernel_profile() {
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.rows.clear();
}

std::string kernel_profile_table() {
  const std::vector<KernelProfileRow> rows = kernel_profile_rows();
  double total = 0.0;
  for (const KernelProfileRow& r : rows) total += r.seconds;
  std::string out = "| kernel | calls | total ms | share | mean us |\n|---|---|---|---|---|\n";
  char line[256];
  for (const KernelProfileRow& r : rows) {
    std::snprintf(line, sizeof line, "| %s | %lld | %.1f | %.1f%% | %.1f |\n", r.name.c_str(),
                  static_cast<long long>(r.calls), r.seconds * 1e3, total > 0 ? 100.0 * r.seconds / total : 0.0,
                  r.calls > 0 ? r.seconds / static_cast<double>(r.calls) * 1e6 : 0.0);
    out += line;
  }
  std::snprintf(line, sizeof line, "| all | | %.1f | 100%% | |\n", total * 1e3);
  out += line;
  return out;
}

KernelProfileScope::KernelProfileScope(const char* name)
    : name_(name), start_ns_(kernel_profile_enabled() ? now_ns() : -1) {}

KernelProfileScope::~KernelProfileScope() {
  if (start_ns_ < 0) return;
  const double seconds = static_cast<double>(now_ns() - start_ns_) * 1e-9;
  Profile& p = profile();
  // One row per kernel, whatever its call site names the template parameter ("gemm<T>", "gemm<T_>").
  const std::string name(name_, std::strcspn(name_, "<"));
  std::lock_guard<std::mutex> lock(p.mutex);
  KernelProfileRow& row = p.rows[name];
  if (row.calls == 0) row.name = name;
  ++row.calls;
  row.seconds += seconds;
}

}  // namespace luong
