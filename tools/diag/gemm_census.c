// LD_PRELOAD census of float32 CPU GEMMs: every cblas_sgemm call, grouped by shape (transposes, M, N, K)
// and by whether beta is 0 (OpenBLAS then zero-fills C in a pass of its own, sgemm_beta), with the wall
// time spent in each group and its GFLOP/s. Printed at exit, busiest first. Made to see which products of
// a CPU training step run below the cores' rate, and what the beta = 0 fills cost.
//   cc -O2 -shared -fPIC -o gemm_census.so tools/diag/gemm_census.c -ldl
//   LD_PRELOAD=./gemm_census.so GEMM_CENSUS_SKIP_S=5 luong_step_bench ...
// GEMM_CENSUS_SKIP_S ignores calls in the first seconds (start-up and warm-up steps), so the table shows
// the steady state.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// cblas.h's enums, as ints (this file must not need the BLAS headers to build).
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                         int);

enum { kGroups = 512 };
static struct {
  int trans_a, trans_b, m, n, k, beta_zero;
  unsigned long calls;
  double seconds;
} groups[kGroups];
static int group_count;
static unsigned long dropped;
static double start_time = -1.0, skip_seconds;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int by_time(const void* a, const void* b) {
  const double x = ((const __typeof__(groups[0])*)a)->seconds, y = ((const __typeof__(groups[0])*)b)->seconds;
  return x < y ? 1 : x > y ? -1 : 0;
}

__attribute__((destructor)) static void report(void) {
  qsort(groups, (size_t)group_count, sizeof groups[0], by_time);
  double total = 0.0, flop = 0.0;
  for (int i = 0; i < group_count; ++i) {
    total += groups[i].seconds;
    flop += 2.0 * groups[i].m * groups[i].n * groups[i].k * (double)groups[i].calls;
  }
  fprintf(stderr, "gemm_census: %d shapes, %.3f s in sgemm, %.1f GFLOP/s overall (%lu calls untracked)\n",
          group_count, total, total > 0 ? flop / total * 1e-9 : 0.0, dropped);
  fprintf(stderr, "| op | M | N | K | beta | calls | ms | %% | GFLOP/s |\n|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < group_count && i < 40; ++i) {
    const double f = 2.0 * groups[i].m * groups[i].n * groups[i].k * (double)groups[i].calls;
    fprintf(stderr, "| %c%c | %d | %d | %d | %s | %lu | %.1f | %.1f | %.1f |\n", groups[i].trans_a ? 'T' : 'N',
            groups[i].trans_b ? 'T' : 'N', groups[i].m, groups[i].n, groups[i].k, groups[i].beta_zero ? "0" : "!0",
            groups[i].calls, groups[i].seconds * 1e3, total > 0 ? 100.0 * groups[i].seconds / total : 0.0,
            groups[i].seconds > 0 ? f / groups[i].seconds * 1e-9 : 0.0);
  }
}

void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                 int ldb, float beta, float* c, int ldc) {
  static sgemm_fn real;
  if (!real) {
    real = (sgemm_fn)dlsym(RTLD_NEXT, "cblas_sgemm");
    const char* skip = getenv("GEMM_CENSUS_SKIP_S");
    skip_seconds = skip ? atof(skip) : 0.0;
  }
  const double t0 = now();
  if (start_time < 0) start_time = t0;
  real(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (t0 - start_time < skip_seconds) return;
  const double dt = now() - t0;
  // CblasTrans is 112 (CblasNoTrans 111); row-major only in luong.
  const int tra = ta == 112, trb = tb == 112, bz = beta == 0.0f;
  for (int i = 0; i < group_count; ++i) {
    if (groups[i].trans_a == tra && groups[i].trans_b == trb && groups[i].m == m && groups[i].n == n &&
        groups[i].k == k && groups[i].beta_zero == bz) {
      groups[i].calls++;
      groups[i].seconds += dt;
      return;
    }
  }
  if (group_count == kGroups) {
    dropped++;
    return;
  }
  groups[group_count].trans_a = tra;
  groups[group_count].trans_b = trb;
  groups[group_count].m = m;
  groups[group_count].n = n;
  groups[group_count].k = k;
  groups[group_count].beta_zero = bz;
  groups[group_count].calls = 1;
  groups[group_count].seconds = dt;
  group_count++;
}
