#include "framework/kernels/cpu/parallel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace luong::cpu {

void set_num_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

int num_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace luong::cpu
