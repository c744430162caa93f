// The environment of a sweep's trial processes: parallel trials share the machine's cores, so each
// process gets its share of OpenMP / OpenBLAS threads unless the user chose a count.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace luong::sweep {

// Processes per trial from an MPI launch prefix ("mpirun -np 4" -> 4; also -n, --np, -c), else 1.
int64_t ranks_per_trial(const std::vector<std::string>& launch);

// OMP_NUM_THREADS and OPENBLAS_NUM_THREADS = max(1, cores / (parallel x ranks)), each only when the user
// did not set it. `getenv` reads the sweep's environment; an OMP_NUM_THREADS that luong itself defaulted
// (LUONG_OMP_NUM_THREADS_DEFAULTED=1, see framework/core/process_setup.h) does not count as the user's.
std::vector<std::pair<std::string, std::string>> thread_env(int64_t cores, int64_t parallel, int64_t ranks,
                                                            const std::function<const char*(const char*)>& getenv);

}  // namespace luong::sweep
