// LD_PRELOAD census of OpenMP parallel regions: counts each GOMP_parallel call (every `#pragma omp
// parallel`, ours and OpenBLAS's) by call site and outlined function, with the wall time spent in it, and
// prints the busiest sites at exit as module+offset (map them with addr2line on the unstripped build).
// Made to find host-side CPU work inside a CUDA training step (tools/gpu-check's omp rows).
//   cc -O2 -shared -fPIC -o omp_census.so tools/diag/omp_census.c -ldl
//   LD_PRELOAD=./omp_census.so luong_step_bench ...
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*gomp_parallel_fn)(void (*)(void*), void*, unsigned, unsigned);

enum { kSites = 256 };
static struct {
  void* caller;
  void* fn;
  unsigned long calls;
  double seconds;
} sites[kSites];
static unsigned long total_calls, dropped;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void describe(void* addr, char* out, size_t size) {
  Dl_info info;
  if (addr && dladdr(addr, &info) && info.dli_fname) {
    snprintf(out, size, "%s+0x%lx", info.dli_fname, (unsigned long)((char*)addr - (char*)info.dli_fbase));
  } else {
    snprintf(out, size, "%p", addr);
  }
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "omp_census: %lu parallel regions (%lu at untracked sites)\n", total_calls, dropped);
  for (int printed = 0; printed < 20; ++printed) {
    int best = -1;
    for (int i = 0; i < kSites; ++i)
      if (sites[i].calls && (best < 0 || sites[i].calls > sites[best].calls)) best = i;
    if (best < 0) break;
    char caller[512], fn[512];
    describe(sites[best].caller, caller, sizeof caller);
    describe(sites[best].fn, fn, sizeof fn);
    fprintf(stderr, "omp_census: %10lu calls %9.1f ms  caller %s  region %s\n", sites[best].calls,
            sites[best].seconds * 1e3, caller, fn);
    sites[best].calls = 0;
  }
}

void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  static gomp_parallel_fn real;
  if (!real) real = (gomp_parallel_fn)dlsym(RTLD_NEXT, "GOMP_parallel");
  void* caller = __builtin_return_address(0);
  const double t0 = now();
  real(fn, data, num_threads, flags);
  const double dt = now() - t0;
  ++total_calls;
  for (int i = 0; i < kSites; ++i) {
    if (sites[i].caller == caller && sites[i].fn == (void*)fn) {
      ++sites[i].calls, sites[i].seconds += dt;
      return;
    }
    if (!sites[i].caller) {
      sites[i].caller = caller, sites[i].fn = (void*)fn, sites[i].calls = 1, sites[i].seconds = dt;
      return;
    }
  }
  ++dropped;
}
