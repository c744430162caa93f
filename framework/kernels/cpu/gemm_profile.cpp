#include "framework/kernels/cpu/gemm_profile.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "framework/kernels/kernel_profile.h"

namespace luong::cpu {
namespace {

using Key = std::tuple<std::string, bool, bool, int64_t, int64_t, int64_t>;

struct Profile {
  std::atomic<bool> enabled{false};
  std::mutex mutex;
  std::map<Key, GemmProfileRow> rows;

  Profile() { enabled = profile_requested_by_environment(); }
  // At exit, when anything was timed: the table, on stderr so it never mixes into a command's output.
  ~Profile() {
    if (rows.empty()) return;
    const std::string table = gemm_profile_table();
    std::fprintf(stderr, "\nCPU GEMM profile (LUONG_PROFILE):\n%s", table.c_str());
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

bool gemm_profile_enabled() { return profile().enabled.load(std::memory_order_relaxed); }

bool set_gemm_profile_enabled(bool on) { return profile().enabled.exchange(on); }

std::vector<GemmProfileRow> gemm_profile_rows() {
  Profile& p = profile();
  std::vector<GemmProfileRow> out;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    for (const auto& [key, row] : p.rows) out.push_back(row);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const GemmProfileRow& x, const GemmProfileRow& y) { return x.seconds > y.seconds; });
  return out;
}

void reset_gemm_profile() {
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.rows.clear();
}

std::string gemm_profile_table() {
  const std::vector<GemmProfileRow> rows = gemm_profile_rows();
  double total = 0.0;
  for (const GemmProfileRow& r : rows) total += r.seconds;
  std::string out =
      "| kernel | op(A) op(B) | M x N, K | calls | total ms | share | GFLOP/s |\n|---|---|---|---|---|---|---|\n";
  char line[256];
  for (const GemmProfileRow& r : rows) {
    const double flop = 2.0 * static_cast<double>(r.m) * r.n * r.k * r.calls;
    std::snprintf(line, sizeof line, "| %s | %s %s | %lld x %lld, K %lld | %lld | %.1f | %.1f%% | %.1f |\n",
                  r.kernel.c_str(), r.trans_a ? "A^T" : "A", r.trans_b ? "B^T" : "B", static_cast<long long>(r.m),
                  static_cast<long long>(r.n), static_cast<long long>(r.k), static_cast<long long>(r.calls),
                  r.seconds * 1e3, total > 0 ? 100.0 * r.seconds / total : 0.0,
                  r.seconds > 0 ? flop / r.seconds * 1e-9 : 0.0);
    out += line;
  }
  std::snprintf(line, sizeof line, "| all | | | | %.1f | 100%% | |\n", total * 1e3);
  out += line;
  return out;
}

GemmProfileScope::GemmProfileScope(const char* kernel, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k)
    : kernel_(kernel),
      trans_a_(trans_a),
      trans_b_(trans_b),
      m_(m),
      n_(n),
      k_(k),
      start_ns_(kernel != nullptr ? now_ns() : -1) {}

GemmProfileScope::~GemmProfileScope() {
  if (start_ns_ < 0) return;
  const double seconds = static_cast<double>(now_ns() - start_ns_) * 1e-9;
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mutex);
  GemmProfileRow& row = p.rows[Key{kernel_, trans_a_, trans_b_, m_, n_, k_}];
  if (row.calls == 0) row = GemmProfileRow{kernel_, trans_a_, trans_b_, m_, n_, k_, 0, 0.0};
  ++row.calls;
  row.seconds += seconds;
}

}  // namespace luong::cpu
