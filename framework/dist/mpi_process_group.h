// The MPI backend: CPU tensors, non-blocking collectives (MPI_Iallreduce, MPI_Ibcast, ...) on a private
// duplicate of MPI_COMM_WORLD, every wait under the watchdog. The NCCL backend also uses one of these as
// its control channel (unique-id exchange, scalars, barriers).
#pragma once
#include <mpi.h>

#include "framework/dist/process_group.h"

namespace luong {

class MpiProcessGroup final : public ProcessGroup {
 public:
  // Initialises MPI if needed (the process must have been started by mpirun or srun).
  explicit MpiProcessGroup(Device device);
  ~MpiProcessGroup() override;
  MpiProcessGroup(const MpiProcessGroup&) = delete;
  MpiProcessGroup& operator=(const MpiProcessGroup&) = delete;

  std::string backend() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  Device device() const override { return device_; }

  Work all_reduce_sum(Tensor& flat) override;  // float32 / float64 CPU tensors
  void broadcast(Tensor& t, int root) override;  // any dtype, CPU tensors
  void all_reduce_scalars(std::vector<double>& values) override;
  void all_reduce_scalars(std::vector<int64_t>& values) override;
  std::vector<uint64_t> all_gather(uint64_t value) override;
  void barrier() override;

  // Blocking broadcast of raw host bytes (the NCCL unique id).
  void broadcast_bytes(void* data, size_t bytes, int root, const char* what);

 private:
  void wait_blocking(MPI_Request& request, const std::string& op);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  Device device_;
};

}  // namespace luong
