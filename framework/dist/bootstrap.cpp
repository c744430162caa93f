#include "framework/dist/bootstrap.h"

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "framework/core/error.h"

namespace luong {
namespace {

const char* env_nonempty(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

int env_int(std::initializer_list<const char*> names, int fallback) {
  for (const char* n : names)
    if (const char* v = env_nonempty(n)) return std::atoi(v);
  return fallback;
}

bool mpi_up() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

void finalize_at_exit() {
  if (mpi_up()) MPI_Finalize();
}

void on_terminate() {
  std::string why = "terminate called without an active exception";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      why = str("uncaught exception: ", x.what());
    } catch (...) {
      why = "uncaught exception of a non-standard type";
    }
  }
  abort_job(why);
}

}  // namespace

bool launched_by_mpi() {
  return env_nonempty("OMPI_COMM_WORLD_SIZE") || env_nonempty("PMI_SIZE") || env_nonempty("PMIX_RANK");
}

int srun_tasks_without_mpi() {
  if (launched_by_mpi()) return 0;
  if (const char* v = env_nonempty("LUONG_INDEPENDENT_TASKS"); v && std::string(v) == "1") return 0;
  const int tasks = env_int({"SLURM_STEP_NUM_TASKS"}, 1);
  return tasks > 1 ? tasks : 0;
}

bool mpi_is_initialized() { return mpi_up(); }

void ensure_mpi_initialized() {
  static std::once_flag once;
  std::call_once(once, [] {
    LUONG_CHECK(launched_by_mpi(), "MPI requested but this process was not started by mpirun or srun "
                "(none of OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK is set); use backend 'auto' or 'local' "
                "for a single process, or start the job with launch/mpirun-luong");
    int init = 0;
    MPI_Initialized(&init);
    if (!init) {
      // SERIALIZED: only one thread at a time calls MPI (the one running backward and the reducer), but
      // it need not be the thread that initialised MPI.
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
      LUONG_CHECK(provided >= MPI_THREAD_SERIALIZED, "MPI provides thread level ", provided,
                  ", luong needs MPI_THREAD_SERIALIZED (", MPI_THREAD_SERIALIZED, ")");
      std::atexit(finalize_at_exit);
    }
    // Errors come back as codes that become luong::Error naming rank and operation.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    install_abort_handlers();
  });
}

int world_rank_hint() {
  if (mpi_up()) {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
  }
  return env_int({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}, 0);
}

int world_size_hint() {
  if (mpi_up()) {
    int n = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
  }
  return env_int({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}, 1);
}

void abort_job(const std::string& why) {
  // A second failure while aborting (another thread, or the terminate handler re-entered) must not
  // print twice or recurse.
  static std::atomic<bool> aborting{false};
  if (aborting.exchange(true)) std::_Exit(1);
  std::fflush(stdout);
  std::fprintf(stderr, "luong: rank %d of %d: aborting the job: %s\n", world_rank_hint(), world_size_hint(),
               why.c_str());
  std::fflush(stderr);
  if (mpi_up()) {
    // mpirun tears the job down on MPI_Abort without always draining what the processes wrote first, so
    // the line above could be lost (a job that ends with only Open MPI's banner). A moment lets it be
    // forwarded, and lets the other ranks failing the same check print theirs.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::_Exit(1);
}

void install_abort_handlers() { std::set_terminate(on_terminate); }

void wait_with_watchdog(const std::function<bool()>& done, std::chrono::milliseconds timeout, int rank,
                        const std::string& op, const std::function<void()>& on_timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  // Poll without sleeping: MPI advances a non-blocking collective only inside MPI calls, so a sleep
  // between polls throttles large transfers. Yielding keeps the core available to ranks and OpenMP threads
  // sharing it (what MPI_Wait itself does when oversubscribed).
  for (uint32_t polls = 0;; ++polls) {
    if (done()) return;
    if (polls % 64 == 0 && Clock::now() > deadline) break;
    std::this_thread::yield();
  }
  if (on_timeout) on_timeout();
  const double seconds = std::chrono::duration<double>(timeout).count();
  abort_job(str("watchdog: rank ", rank, ": ", op, " did not complete within ", seconds,
                " s (another rank probably died, hung, or issued a different collective; the timeout is "
                "dist.timeout_s in the config of luong train, else the LUONG_DIST_TIMEOUT_S environment variable)"));
}

}  // namespace luong
