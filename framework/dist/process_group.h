// ProcessGroup: the ranks of a data-parallel job and the collectives the trainer needs. One interface,
// three backends: "local" (one process, no MPI at all), "mpi" (CPU tensors, non-blocking MPI collectives)
// and "nccl" (CUDA tensors, compiled only in the CUDA build; bootstrapped over MPI).
//
// Every blocking wait inside a backend runs under a watchdog: a collective that does not complete within
// timeout() aborts the whole job with a message naming the rank and the operation, so a dead or stuck
// rank never leaves the others hanging forever.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"

namespace luong {

// The handle of an asynchronous collective. test() drives progress without blocking (MPI only advances a
// non-blocking collective inside MPI calls, so callers poll it while they compute); wait() blocks under
// the group's watchdog. A default-constructed Work is already complete.
class Work {
 public:
  struct Impl {
    virtual ~Impl() = default;
    virtual bool test() = 0;  // true once complete
    virtual void wait() = 0;  // returns when complete, or aborts the job at the timeout
  };
  Work() = default;
  explicit Work(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  bool test();
  void wait();
  bool completed() const { return done_ || !impl_; }

 private:
  std::shared_ptr<Impl> impl_;
  bool done_ = false;
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual std::string backend() const = 0;  // "local", "mpi" or "nccl"
  virtual int rank() const = 0;             // 0 .. size() - 1
  virtual int size() const = 0;
  virtual int local_rank() const = 0;       // rank among the processes of this node (picks the GPU)
  virtual int local_size() const = 0;
  // The device this rank computes on: the requested one, except that the NCCL backend picks the GPU
  // of this rank's local rank (one process per GPU).
  virtual Device device() const = 0;

  // In-place sum over ranks of a contiguous float32/float64 tensor (bfloat16 too on NCCL), asynchronous.
  // The tensor's storage is kept alive by the Work until it completes.
  virtual Work all_reduce_sum(Tensor& flat) = 0;  // flat: (n,) or any shape, contiguous
  // Blocking: copies root's tensor into every other rank's tensor (same shape and dtype everywhere).
  virtual void broadcast(Tensor& t, int root) = 0;
  // Blocking sums of a few host scalars (loss sums, token counts), in place.
  virtual void all_reduce_scalars(std::vector<double>& values) = 0;
  virtual void all_reduce_scalars(std::vector<int64_t>& values) = 0;
  // Blocking: every rank's value, indexed by rank (parameter checksums, layout hashes).
  virtual std::vector<uint64_t> all_gather(uint64_t value) = 0;
  virtual void barrier() = 0;

  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }

 protected:
  ProcessGroup();

 private:
  std::chrono::milliseconds timeout_;
};

// Builds the group for this process. backend: "auto" | "local" | "mpi" | "nccl".
//   auto: a job started by mpirun/srun (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK in the environment)
//         gets "nccl" for a CUDA device when NCCL is compiled in and "mpi" otherwise; a plain process gets
//         "local" and MPI is never initialised.
//   mpi / nccl: need such a launcher; otherwise luong::Error says so.
std::unique_ptr<ProcessGroup> make_process_group(const std::string& backend, Device device);

// The default watchdog timeout: LUONG_DIST_TIMEOUT_S from the environment, else 60 s.
std::chrono::milliseconds default_collective_timeout();

}  // namespace luong
