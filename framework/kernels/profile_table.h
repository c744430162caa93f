// The store behind both CPU profiles (kernel_profile.h by kernel name, cpu/gemm_profile.h by GEMM kernel and
// shape): an on/off switch that LUONG_PROFILE sets at start-up, one row per key with its call count and summed
// seconds under a mutex (kernels may be called from several threads), the rows largest total first, and the
// table printed to stderr at exit when anything was timed (stderr, so it never mixes into a command's output).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace luong {

// LUONG_PROFILE is set and not "0".
bool profile_requested_by_environment();
// A monotonic clock in nanoseconds, for the profiles' scopes.
int64_t profile_clock_ns();
// The line above a table: "<title> (LUONG_PROFILE):", with "rank R of N" in a job of several processes, whose
// tables all go to the one stderr an mpirun collects.
std::string profile_heading(const char* title);

// Row: any struct with `int64_t calls` and `double seconds`.
template <class Key, class Row>
class ProfileTable {
 public:
  using Format = std::string (*)(const std::vector<Row>&);
  ProfileTable(const char* title, Format format)
      : enabled_(profile_requested_by_environment()), title_(title), format_(format) {}
  ~ProfileTable() {
    if (rows_.empty()) return;
    const std::string table = format_(rows());
    std::fprintf(stderr, "\n%s\n%s", profile_heading(title_).c_str(), table.c_str());
  }
  ProfileTable(const ProfileTable&) = delete;
  ProfileTable& operator=(const ProfileTable&) = delete;

  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  bool set_enabled(bool on) { return enabled_.exchange(on); }

  // One call of `seconds` for `key`; its row is made by make() on the key's first call.
  template <class Make>
  void add(const Key& key, double seconds, Make make) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = rows_.find(key);
    if (it == rows_.end()) it = rows_.emplace(key, make()).first;
    ++it->second.calls;
    it->second.seconds += seconds;
  }

  std::vector<Row> rows() const {
    std::vector<Row> out;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const auto& entry : rows_) out.push_back(entry.second);
    }
    std::stable_sort(out.begin(), out.end(), [](const Row& x, const Row& y) { return x.seconds > y.seconds; });
    return out;
  }

  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    rows_.clear();
  }

 private:
  std::atomic<bool> enabled_;
  const char* title_;
  Format format_;
  mutable std::mutex mutex_;
  std::map<Key, Row> rows_;
};

}  // namespace luong
