// How many threads one process should run: its share of the CPUs, decided before any thread pool starts.
//
// std::thread::hardware_concurrency() counts the machine's CPUs, not the ones this process may use. A plain
// `mpirun -np 2 luong train` on 2 cores binds each rank to one core, and `srun --cpus-per-task=16` on a
// 128-core node confines each task to 16: with the machine's count as the default every rank started that
// many OpenMP and OpenBLAS threads on its few CPUs (measured: 2 threads on each rank's single core). The
// default is now the CPUs of the affinity mask, divided among the ranks a launcher put on this node when
// they share the same CPUs.
#pragma once
#include <sched.h>

#include <functional>

namespace luong {

// With OMP_PROC_BIND set, libgomp binds the initial thread to its first place as it loads, before main, so
// the affinity mask then shows one CPU. The union of the places libgomp computed from the mask the process
// started with is the process's real set: written to `out`; false without places (no binding).
bool union_of_openmp_places(cpu_set_t& out);

// CPUs this process may run on: the union of its OpenMP places when OMP_PROC_BIND has already bound the
// initial thread to one of them (libgomp does so as it loads), else its affinity mask (a launcher's
// binding, a cgroup, taskset); the machine's count if neither can be read.
int usable_cpus();

// The number of processes of this job on this node, from the launcher's environment (MPI is not up yet):
// Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's MPI_LOCALNRANKS, or Slurm's SLURM_STEP_TASKS_PER_NODE
// ("4(x2),3": four tasks on each of the first two nodes, three on the third) at SLURM_NODEID. 1 otherwise.
int ranks_on_this_node(const std::function<const char*(const char*)>& getenv);

// Threads for one process: its usable CPUs, but no more than an equal share of the machine's among the
// node's ranks (ranks left unbound, or bound to one shared socket, see the same CPUs): min(usable,
// max(1, machine / ranks)), at least 1.
int default_threads(int machine_cpus, int usable, int ranks);

// The three together, for this process: what OMP_NUM_THREADS defaults to (framework/core/process_setup.h)
// and what `luong sweep` divides among its trials.
int default_threads_for_this_process();

}  // namespace luong
