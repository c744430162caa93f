#include "framework/kernels/kernel_profile.h"

#include <cstdio>
#include <cstring>

#include "framework/kernels/profile_table.h"

namespace luong {
namespace {

std::string format(const std::vector<KernelProfileRow>& rows) {
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
  return out + line;
}

ProfileTable<std::string, KernelProfileRow>& table() {
  static ProfileTable<std::string, KernelProfileRow> t("CPU kernel profile", format);
  return t;
}

}  // namespace

bool kernel_profile_enabled() { return table().enabled(); }

bool set_kernel_profile_enabled(bool on) { return table().set_enabled(on); }

std::vector<KernelProfileRow> kernel_profile_rows() { return table().rows(); }

void reset_kernel_profile() { table().reset(); }

std::string kernel_profile_table() { return format(table().rows()); }

KernelProfileScope::KernelProfileScope(const char* name)
    : name_(name), start_ns_(kernel_profile_enabled() ? profile_clock_ns() : -1) {}

KernelProfileScope::~KernelProfileScope() {
  if (start_ns_ < 0) return;
  const double seconds = static_cast<double>(profile_clock_ns() - start_ns_) * 1e-9;
  // One row per kernel, whatever its call site names the template parameter ("gemm<T>", "gemm<T_>").
  const std::string name(name_, std::strcspn(name_, "<"));
  table().add(name, seconds, [&] { return KernelProfileRow{name, 0, 0.0}; });
}

}  // namespace luong
