#include "framework/kernels/cpu/gemm_profile.h"

#include <cstdio>
#include <tuple>

#include "framework/kernels/profile_table.h"

namespace luong::cpu {
namespace {

using Key = std::tuple<std::string, bool, bool, int64_t, int64_t, int64_t>;

std::string format(const std::vector<GemmProfileRow>& rows) {
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
  return out + line;
}

ProfileTable<Key, GemmProfileRow>& table() {
  static ProfileTable<Key, GemmProfileRow> t("CPU GEMM profile", format);
  return t;
}

}  // namespace

bool gemm_profile_enabled() { return table().enabled(); }

bool set_gemm_profile_enabled(bool on) { return table().set_enabled(on); }

std::vector<GemmProfileRow> gemm_profile_rows() { return table().rows(); }

void reset_gemm_profile() { table().reset(); }

std::string gemm_profile_table() { return format(table().rows()); }

GemmProfileScope::GemmProfileScope(const char* kernel, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k)
    : kernel_(kernel),
      trans_a_(trans_a),
      trans_b_(trans_b),
      m_(m),
      n_(n),
      k_(k),
      start_ns_(kernel != nullptr && gemm_profile_enabled() ? profile_clock_ns() : -1) {}

GemmProfileScope::~GemmProfileScope() {
  if (start_ns_ < 0) return;
  const double seconds = static_cast<double>(profile_clock_ns() - start_ns_) * 1e-9;
  table().add(Key{kernel_, trans_a_, trans_b_, m_, n_, k_}, seconds,
              [&] { return GemmProfileRow{kernel_, trans_a_, trans_b_, m_, n_, k_, 0, 0.0}; });
}

}  // namespace luong::cpu
