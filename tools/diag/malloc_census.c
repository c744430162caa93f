// LD_PRELOAD census of heap allocations: counts malloc / calloc / realloc / aligned_alloc / posix_memalign calls
// and C++'s operator new (routed to them here, as an allocator such as jemalloc serves it without malloc) and prints
// the totals at exit. Much of the engine's host time per kernel call was
// bookkeeping allocations (docs/PERFORMANCE.md, "The engine's host time"); a step's count is the difference of two
// runs that differ only in their step count, divided by the difference:
//   cc -O2 -shared -fPIC -o malloc_census.so tools/diag/malloc_census.c -ldl
//   LD_PRELOAD=./malloc_census.so luong_step_bench --warmup 2 --windows 1 --steps 1 ...   (then --steps 11: / 10)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_ulong allocations;
static atomic_ulong frees;

// With MALLOC_CENSUS_SITES set, each allocation is also charged to its first caller outside the C and C++ runtimes
// (found with backtrace and dladdr; slow, for attribution only) and the busiest callers are printed at exit as
// module+offset, for addr2line -f -C -e module offset. MALLOC_CENSUS_MIN_BYTES=N attributes only requests of at
// least N bytes (large requests make glibc consolidate its small-chunk bins, a cost of its own).
enum { kSites = 4096, kDepth = 12 };
static struct {
  void* caller;
  unsigned long calls;
} sites[kSites];
static int sites_on = -1;
static __thread int in_census;
static void count_site(size_t bytes);
static size_t site_min_bytes;  // MALLOC_CENSUS_MIN_BYTES: attribute only allocations at least this large

// dlsym itself may call calloc before the real one is known: serve those few from a static arena.
static char bootstrap[4096];
static size_t bootstrap_used;
static int resolving;

typedef void* (*malloc_fn)(size_t);
typedef void* (*calloc_fn)(size_t, size_t);
typedef void* (*realloc_fn)(void*, size_t);
typedef void (*free_fn)(void*);
typedef int (*memalign_fn)(void**, size_t, size_t);
typedef void* (*aligned_fn)(size_t, size_t);
static malloc_fn real_malloc;
static calloc_fn real_calloc;
static realloc_fn real_realloc;
static free_fn real_free;
static memalign_fn real_posix_memalign;
static aligned_fn real_aligned_alloc;

static void resolve(void) {
  if (real_malloc) return;
  resolving = 1;
  real_calloc = (calloc_fn)dlsym(RTLD_NEXT, "calloc");
  real_realloc = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
  real_free = (free_fn)dlsym(RTLD_NEXT, "free");
  real_posix_memalign = (memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = (aligned_fn)dlsym(RTLD_NEXT, "aligned_alloc");
  real_malloc = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
  resolving = 0;
}

static int from_bootstrap(const void* p) {
  return (const char*)p >= bootstrap && (const char*)p < bootstrap + sizeof bootstrap;
}

void* malloc(size_t n) {
  resolve();
  atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  count_site(n);
  return real_malloc(n);
}

void* calloc(size_t count, size_t n) {
  if (resolving) {  // dlsym's own allocation, before real_calloc exists
    size_t bytes = (count * n + 15) & ~(size_t)15;
    if (bootstrap_used + bytes > sizeof bootstrap) return NULL;
    void* p = bootstrap + bootstrap_used;
    bootstrap_used += bytes;
    return p;
  }
  resolve();
  atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  count_site(count * n);
  return real_calloc(count, n);
}

void* realloc(void* p, size_t n) {
  resolve();
  atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  count_site(n);
  return real_realloc(p, n);
}

int posix_memalign(void** out, size_t alignment, size_t n) {
  resolve();
  atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  count_site(n);
  return real_posix_memalign(out, alignment, n);
}

void* aligned_alloc(size_t alignment, size_t n) {
  resolve();
  atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  count_site(n);
  return real_aligned_alloc(alignment, n);
}

void free(void* p) {
  if (!p || from_bootstrap(p)) return;
  resolve();
  atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
  real_free(p);
}

// C++'s operator new and delete, every form. An allocator that defines them itself (jemalloc's does, and luong's
// programs link jemalloc) serves `new` without calling malloc, so without these the census would miss every C++
// allocation. They forward to the counted functions above; on failure the throwing forms abort (a C shim cannot
// throw std::bad_alloc), acceptable for a diagnostic run. Names are the Itanium C++ ABI's manglings.
static void* checked(void* p) {
  if (!p) abort();
  return p;
}
static void* aligned(size_t alignment, size_t n) {
  void* p = NULL;
  return posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, n ? n : 1) == 0 ? p : NULL;
}
void* _Znwm(size_t n) { return checked(malloc(n ? n : 1)); }
void* _Znam(size_t n) { return checked(malloc(n ? n : 1)); }
void* _ZnwmRKSt9nothrow_t(size_t n, const void* tag) { return malloc(n ? n : 1); }
void* _ZnamRKSt9nothrow_t(size_t n, const void* tag) { return malloc(n ? n : 1); }
void* _ZnwmSt11align_val_t(size_t n, size_t al) { return checked(aligned(al, n)); }
void* _ZnamSt11align_val_t(size_t n, size_t al) { return checked(aligned(al, n)); }
void* _ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void* tag) { return aligned(al, n); }
void* _ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void* tag) { return aligned(al, n); }
void _ZdlPv(void* p) { free(p); }
void _ZdaPv(void* p) { free(p); }
void _ZdlPvm(void* p, size_t n) { free(p); }
void _ZdaPvm(void* p, size_t n) { free(p); }
void _ZdlPvRKSt9nothrow_t(void* p, const void* tag) { free(p); }
void _ZdaPvRKSt9nothrow_t(void* p, const void* tag) { free(p); }
void _ZdlPvSt11align_val_t(void* p, size_t al) { free(p); }
void _ZdaPvSt11align_val_t(void* p, size_t al) { free(p); }
void _ZdlPvmSt11align_val_t(void* p, size_t n, size_t al) { free(p); }
void _ZdaPvmSt11align_val_t(void* p, size_t n, size_t al) { free(p); }
void _ZdlPvSt11align_val_tRKSt9nothrow_t(void* p, size_t al, const void* tag) { free(p); }
void _ZdaPvSt11align_val_tRKSt9nothrow_t(void* p, size_t al, const void* tag) { free(p); }

static int runtime_module(const char* path) {
  return !path || strstr(path, "libstdc++") || strstr(path, "libc.so") || strstr(path, "libjemalloc") ||
         strstr(path, "malloc_census");
}

static void count_site(size_t bytes) {
  if (sites_on < 0) {
    sites_on = getenv("MALLOC_CENSUS_SITES") != NULL;
    const char* min = getenv("MALLOC_CENSUS_MIN_BYTES");
    site_min_bytes = min ? (size_t)strtoull(min, NULL, 10) : 0;
  }
  if (!sites_on || in_census || bytes < site_min_bytes) return;
  in_census = 1;  // backtrace and dladdr may allocate
  void* frames[kDepth];
  int depth = backtrace(frames, kDepth);
  void* caller = NULL;
  for (int i = 1; i < depth && !caller; ++i) {
    Dl_info info;
    if (dladdr(frames[i], &info) && !runtime_module(info.dli_fname)) caller = frames[i];
  }
  if (caller) {
    size_t h = ((size_t)caller >> 2) % kSites;
    for (size_t probe = 0; probe < kSites; ++probe, h = (h + 1) % kSites) {
      if (sites[h].caller == caller || !sites[h].caller) {
        sites[h].caller = caller;  // single-threaded use only (OMP_NUM_THREADS=1)
        ++sites[h].calls;
        break;
      }
    }
  }
  in_census = 0;
}

static void report_sites(void) {
  in_census = 1;
  for (int rank = 0; rank < 40; ++rank) {
    int best = -1;
    for (int i = 0; i < kSites; ++i)
      if (sites[i].caller && sites[i].calls && (best < 0 || sites[i].calls > sites[best].calls)) best = i;
    if (best < 0) break;
    Dl_info info;
    char line[512];
    int n = 0;
    if (dladdr(sites[best].caller, &info) && info.dli_fname)
      n = snprintf(line, sizeof line, "malloc_census: %8lu %s+0x%lx\n", sites[best].calls, info.dli_fname,
                   (unsigned long)((char*)sites[best].caller - (char*)info.dli_fbase));
    if (n > 0) (void)!write(2, line, (size_t)n);
    sites[best].calls = 0;
  }
}

__attribute__((destructor)) static void report(void) {
  if (sites_on > 0) report_sites();
  char line[128];
  int n = snprintf(line, sizeof line, "malloc_census: %lu allocations, %lu frees\n", atomic_load(&allocations),
                   atomic_load(&frees));
  if (n > 0) (void)!write(2, line, (size_t)n);
}
