#include "framework/core/cpu_share.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace luong {
namespace {

// The machine's CPUs, online (std::thread's count), at least 1.
int machine_cpus() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// A whole number >= 1, or 0 for anything else.
int positive(const char* text) {
  if (!text || !*text) return 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return *end == '\0' && v > 0 && v < (1 << 20) ? static_cast<int>(v) : 0;
}

// Slurm's compressed per-node task counts ("4(x2),3") at node `node`; 0 when malformed or out of range.
int slurm_tasks_on_node(const std::string& spec, int node) {
  size_t at = 0;
  int seen = 0;
  while (at < spec.size()) {
    size_t end = spec.find(',', at);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(at, end - at);
    const size_t paren = item.find("(x");
    const int tasks = positive(item.substr(0, paren).c_str());
    int repeat = 1;
    if (paren != std::string::npos) {
      if (item.back() != ')') return 0;
      repeat = positive(item.substr(paren + 2, item.size() - paren - 3).c_str());
    }
    if (tasks == 0 || repeat == 0) return 0;
    if (node < seen + repeat) return tasks;
    seen += repeat;
    at = end + 1;
  }
  return 0;
}

}  // namespace

bool union_of_openmp_places(cpu_set_t& out) {
  CPU_ZERO(&out);
#ifdef _OPENMP
  const int places = omp_get_num_places();
  for (int p = 0; p < places; ++p) {
    std::vector<int> ids(static_cast<size_t>(omp_get_place_num_procs(p)));
    omp_get_place_proc_ids(p, ids.data());
    for (const int id : ids)
      if (id >= 0 && id < CPU_SETSIZE) CPU_SET(id, &out);
  }
#endif
  return CPU_COUNT(&out) > 0;
}

int usable_cpus() {
  cpu_set_t set;
  if (union_of_openmp_places(set) || sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return machine_cpus();
}

int ranks_on_this_node(const std::function<const char*(const char*)>& getenv) {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const int n = positive(getenv(name))) return n;
  if (const char* spec = getenv("SLURM_STEP_TASKS_PER_NODE")) {
    const char* node = getenv("SLURM_NODEID");
    if (const int n = slurm_tasks_on_node(spec, node ? std::atoi(node) : 0)) return n;
  }
  return 1;
}

int default_threads(int machine_cpus, int usable, int ranks) {
  const int share = std::max(1, machine_cpus / std::max(1, ranks));
  return std::max(1, std::min(usable, share));
}

int default_threads_for_this_process() {
  return default_threads(machine_cpus(), usable_cpus(),
                         ranks_on_this_node([](const char* n) { return std::getenv(n); }));
}

}  // namespace luong
