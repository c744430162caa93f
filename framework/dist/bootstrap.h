// Process-level MPI life cycle: detecting a launcher, initialising MPI once, finalising it at exit, and
// taking the whole job down when one rank fails (so the others never wait on it forever).
#pragma once
#include <chrono>
#include <functional>
#include <string>

namespace luong {

// True when this process was started by mpirun (OMPI_COMM_WORLD_SIZE), a PMI launcher (PMI_SIZE) or a
// PMIx launcher such as srun --mpi=pmix (PMIX_RANK). Only then is MPI initialised.
bool launched_by_mpi();

// The number of tasks of a Slurm job step that srun started without MPI process management (srun --mpi=none
// or a cluster whose default MPI plugin is none): SLURM_STEP_NUM_TASKS > 1 while none of the variables above
// is set. Each such task would initialise as a job of one process and train alone on the whole data, all of
// them writing the same checkpoints. 0 when this is not such a step (no srun, one task, or PMI/PMIx present).
// Read from SLURM_STEP_NUM_TASKS, which srun sets for a step's tasks and sbatch does not set for the batch
// script, so a plain `luong train` inside a many-task allocation is not mistaken for one. Also 0 with
// LUONG_INDEPENDENT_TASKS=1: a step that runs independent jobs on purpose (each with its own run directory).
int srun_tasks_without_mpi();

// Initialises MPI (MPI_THREAD_SERIALIZED) on first call, registers MPI_Finalize at exit and installs the
// abort handlers. Throws luong::Error when no launcher started this process.
void ensure_mpi_initialized();
bool mpi_is_initialized();

// This process's world rank and size for messages: from MPI when it is up, else from the launcher's
// environment, else 0 of 1.
int world_rank_hint();
int world_size_hint();

// Prints "luong: rank R of N: aborting the job: why" to stderr and ends the whole job with a non-zero
// status: MPI_Abort when MPI is up (mpirun then kills every rank), else exit status 1. For the CLI's error
// path: an exception on one rank must not leave the others blocked in a collective.
[[noreturn]] void abort_job(const std::string& why);

// std::set_terminate handler that reports the uncaught exception (with the rank) and calls abort_job.
// Installed by ensure_mpi_initialized; callable directly by programs that want it without MPI.
void install_abort_handlers();

// Polls `done` until it returns true. If `timeout` passes first, aborts the job naming the rank and `op`
// (the watchdog behind every blocking wait of the MPI and NCCL backends). `on_timeout` runs before the
// abort (e.g. to abort an NCCL communicator).
void wait_with_watchdog(const std::function<bool()>& done, std::chrono::milliseconds timeout, int rank,
                        const std::string& op, const std::function<void()>& on_timeout = {});

}  // namespace luong
