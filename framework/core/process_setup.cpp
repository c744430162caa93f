#include "framework/core/process_setup.h"

#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "framework/core/cpu_share.h"

extern "C" char* openblas_get_corename(void);
extern "C" void openblas_set_num_threads(int);

namespace luong {
namespace {

const char* best_core_type() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

// The exec'd image inherits the mask of the initial thread, which OMP_PROC_BIND has narrowed to one CPU: its
// libgomp would then find a single place and bind every thread to the same CPU (measured on 2 cores: 392
// instead of 201 ms per step). Before re-exec, widen the mask back to the union of the places. A no-op
// without binding (no places).
void restore_affinity_before_exec() {
  cpu_set_t all;
  if (union_of_openmp_places(all)) sched_setaffinity(0, sizeof all, &all);  // best effort: else the narrow mask
}

}  // namespace

void configure_process(int argc, char** argv) {
  (void)argc;
  // Thread defaults: one OpenMP thread per core of this process's share (framework/core/cpu_share.h) for our
  // kernels, and OpenBLAS on the same cores (the two pools take turns, never run at once). A user's explicit
  // settings always win.
  const int cores = default_threads_for_this_process();
  if (!std::getenv("OMP_NUM_THREADS")) {
    setenv("OMP_NUM_THREADS", std::to_string(cores).c_str(), 1);
    // Tells `luong sweep` this value is a default it may divide among parallel trials, not the user's.
    setenv("LUONG_OMP_NUM_THREADS_DEFAULTED", "1", 1);
  }
  // With OpenMP OpenBLAS this also sets the OpenMP thread count, so take the user's OMP_NUM_THREADS when
  // given: OMP_NUM_THREADS=1 alone must mean one thread.
  if (!std::getenv("OPENBLAS_NUM_THREADS")) {
    const int omp = std::atoi(std::getenv("OMP_NUM_THREADS"));
    openblas_set_num_threads(omp > 0 ? omp : cores);
  }

  // Both variables below are read once, when OpenBLAS and libgomp load, so setting them needs a re-exec.
  const char* no_reexec = std::getenv("LUONG_NO_REEXEC");
  if (no_reexec && std::string(no_reexec) == "1") return;
  bool changed = false;
  // How idle OpenMP threads wait. Spinning without bound steals the cores from OpenBLAS and from other
  // ranks (measured on 2 loaded cores with the pthread OpenBLAS: 14x slower training); never spinning
  // (OMP_WAIT_POLICY=passive) pays a futex wake-up for each of the thousands of small parallel regions
  // of a step. A short spin of 30,000 iterations (tens of microseconds) before sleeping measured best on
  // the benchmark model, 2 cores: 4,150-4,750 vs 3,780-3,950 target tokens/s quiet, 3,390 vs 2,310-2,640
  // next to a training run (bench/luong_step_bench). libgomp lowers the spin itself when threads
  // outnumber cores. Either variable set by the user wins.
  if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT")) {
    setenv("GOMP_SPINCOUNT", "30000", 1);
    changed = true;
  }
  if (!std::getenv("OPENBLAS_CORETYPE")) {
    // Only when the loaded library has fallen back to a generic core.
    const std::string loaded = openblas_get_corename();
    static const char* kGeneric[] = {"Prescott", "Core2", "Nehalem", "Atom", "Katmai", "Sandybridge", "Penryn", "Dunnington"};
    bool generic = false;
    for (const char* g : kGeneric) generic = generic || loaded == g;
    if (const char* core = best_core_type(); generic && core) {
      setenv("OPENBLAS_CORETYPE", core, 1);
      changed = true;
    }
  }
  if (!changed) return;
  setenv("LUONG_NO_REEXEC", "1", 1);  // never loop
  restore_affinity_before_exec();
  execv("/proc/self/exe", argv);
  // execv returns only on failure: carry on with the slower settings rather than fail.
}

const char* blas_core_name() { return openblas_get_corename(); }

}  // namespace luong
