// Where a CPU step's time goes, kernel by kernel. With LUONG_PROFILE=1 in the environment every CPU kernel
// called through LUONG_KERNEL (kernels/dispatch.h: every op's kernel) is timed under its name; at exit the
// process prints one Markdown table to stderr (calls, total ms, share, mean microseconds; largest total
// first). Time outside those calls (autograd bookkeeping, allocation, the few kernels an op calls directly)
// is what a step's wall time has beyond the table's total. The GEMM profile (kernels/cpu/gemm_profile.h)
// splits the GEMM rows further, by kernel and shape, under the same variable.
//
// Off (the default) a call costs one relaxed atomic load. On, two clock reads and a locked map update (about
// a microsecond), so a kernel called very often reads slower than it runs. CPU only: a CUDA kernel call
// returns when it is queued, so the host would time the launch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace luong {

bool kernel_profile_enabled();
// Returns the previous setting (tests; LUONG_PROFILE sets it at start-up).
bool set_kernel_profile_enabled(bool on);

struct KernelProfileRow {
  std::string name;  // the kernel's name without template arguments, e.g. "lstm_cell_forward"
  int64_t calls = 0;
  double seconds = 0.0;
};

std::vector<KernelProfileRow> kernel_profile_rows();  // largest total time first
void reset_kernel_profile();
std::string kernel_profile_table();

// Times the CPU kernel call it is created around (LUONG_KERNEL makes one as a temporary of the call's full
// expression, so its destructor runs when the call returns). `name` must outlive it (a string literal).
class KernelProfileScope {
 public:
  explicit KernelProfileScope(const char* name);
  ~KernelProfileScope();
  KernelProfileScope(const KernelProfileScope&) = delete;
  KernelProfileScope& operator=(const KernelProfileScope&) = delete;

 private:
  const char* name_;
  int64_t start_ns_;  // -1 when the profile is off
};

}  // namespace luong
