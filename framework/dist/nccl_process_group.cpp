// The NCCL backend (CUDA build only): one process per GPU, one NCCL communicator for the job, created
// from a unique id that rank 0 broadcasts over MPI. Tensor collectives run on a dedicated CUDA stream
// that first waits (on the GPU, via an event) for the compute stream, so the all-reduce of a bucket
// overlaps the rest of backward without blocking the host. Scalars, gathers and barriers go over MPI.
#ifdef LUONG_WITH_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include "framework/dist/backend_registry.h"
#include "framework/dist/bootstrap.h"
#include "framework/dist/mpi_process_group.h"

namespace luong {
namespace {

void check_cuda(cudaError_t e, int rank, const char* what) {
  if (e != cudaSuccess) LUONG_FAIL("rank ", rank, ": ", what, ": ", cudaGetErrorString(e));
}

void check_nccl(ncclResult_t r, int rank, const std::string& what) {
  if (r != ncclSuccess) LUONG_FAIL("rank ", rank, ": ", what, ": NCCL error: ", ncclGetErrorString(r));
}

ncclDataType_t nccl_type(const Tensor& t, const char* op) {
  switch (t.dtype()) {
    case DType::f32: return ncclFloat32;
    case DType::f64: return ncclFloat64;
    case DType::bf16: return ncclBfloat16;
    default: LUONG_FAIL(op, " (nccl backend): dtype ", t.dtype(), " is not supported (need a floating dtype)");
  }
}

// An in-flight NCCL collective: complete when the event recorded after it on the comm stream fires.
// While waiting, NCCL's own asynchronous error (a peer that died) is checked too.
class NcclWork final : public Work::Impl {
 public:
  NcclWork(cudaEvent_t done, Tensor keep_alive, ncclComm_t comm, int rank, std::string op,
           std::chrono::milliseconds timeout)
      : done_event_(done), keep_alive_(std::move(keep_alive)), comm_(comm), rank_(rank), op_(std::move(op)),
        timeout_(timeout) {}
  ~NcclWork() override {
    if (!done_) wait();
    cudaEventDestroy(done_event_);
  }

  bool test() override {
    if (done_) return true;
    const cudaError_t e = cudaEventQuery(done_event_);
    if (e == cudaErrorNotReady) {
      ncclResult_t async = ncclSuccess;
      check_nccl(ncclCommGetAsyncError(comm_, &async), rank_, op_);
      check_nccl(async, rank_, op_);
      return false;
    }
    check_cuda(e, rank_, op_.c_str());
    done_ = true;
    return true;
  }
  void wait() override {
    wait_with_watchdog([this] { return test(); }, timeout_, rank_, op_, [this] { ncclCommAbort(comm_); });
  }

 private:
  cudaEvent_t done_event_;
  Tensor keep_alive_;
  ncclComm_t comm_;
  int rank_;
  std::string op_;
  std::chrono::milliseconds timeout_;
  bool done_ = false;
};

class NcclProcessGroup final : public ProcessGroup {
 public:
  explicit NcclProcessGroup(Device requested) : control_(Device::cpu()) {
    LUONG_CHECK(requested.is_cuda(), "nccl backend: device ", requested, " is not a GPU (use the mpi backend)");
    set_timeout(control_.timeout());
    int count = 0;
    check_cuda(cudaGetDeviceCount(&count), rank(), "cudaGetDeviceCount");
    LUONG_CHECK(count > 0, "nccl backend: rank ", rank(), " sees no CUDA device");
    // One process per GPU: local rank k drives GPU k of its node, unless the launcher already gave each
    // process exactly one visible GPU (srun --gpus-per-task=1, CUDA_VISIBLE_DEVICES per rank).
    const int index = count == 1 ? 0 : control_.local_rank();
    LUONG_CHECK(index < count, "nccl backend: rank ", rank(), " has local rank ", control_.local_rank(), " but its node "
                "shows only ", count, " GPUs (start one process per GPU)");
    device_ = Device::cuda(index);
    check_cuda(cudaSetDevice(device_.index), rank(), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&comm_stream_, cudaStreamNonBlocking), rank(), "cudaStreamCreate");

    ncclUniqueId id;
    if (rank() == 0) check_nccl(ncclGetUniqueId(&id), rank(), "ncclGetUniqueId");
    control_.broadcast_bytes(&id, sizeof id, 0, "NCCL unique id broadcast");
    check_nccl(ncclCommInitRank(&comm_, size(), id, rank()), rank(), "ncclCommInitRank");
  }
  ~NcclProcessGroup() override {
    if (comm_) ncclCommDestroy(comm_);
    if (comm_stream_) cudaStreamDestroy(comm_stream_);
  }

  std::string backend() const override { return "nccl"; }
  int rank() const override { return control_.rank(); }
  int size() const override { return control_.size(); }
  int local_rank() const override { return control_.local_rank(); }
  int local_size() const override { return control_.local_size(); }
  Device device() const override { return device_; }

  Work all_reduce_sum(Tensor& flat) override {
    check_on_device(flat, "all_reduce_sum");
    const std::string op = str("all_reduce_sum of ", flat.describe());
    enter_comm_stream(op);
    check_nccl(ncclAllReduce(flat.raw(), flat.raw(), static_cast<size_t>(flat.numel()), nccl_type(flat, "all_reduce_sum"),
                             ncclSum, comm_, comm_stream_),
               rank(), op);
    return Work(std::make_shared<NcclWork>(leave_comm_stream(op), flat, comm_, rank(), op, timeout()));
  }

  void broadcast(Tensor& t, int root) override {
    check_on_device(t, "broadcast");
    LUONG_CHECK(root >= 0 && root < size(), "broadcast: root ", root, " out of range for a group of size ", size());
    const std::string op = str("broadcast of ", t.describe(), " from rank ", root);
    enter_comm_stream(op);
    // As bytes, so every dtype (ids, masks, parameters) can be broadcast.
    check_nccl(ncclBroadcast(t.raw(), t.raw(), t.nbytes(), ncclUint8, root, comm_, comm_stream_), rank(), op);
    Work(std::make_shared<NcclWork>(leave_comm_stream(op), t, comm_, rank(), op, timeout())).wait();
  }

  void all_reduce_scalars(std::vector<double>& values) override { control().all_reduce_scalars(values); }
  void all_reduce_scalars(std::vector<int64_t>& values) override { control().all_reduce_scalars(values); }
  std::vector<uint64_t> all_gather(uint64_t value) override { return control().all_gather(value); }
  void barrier() override { control().barrier(); }

 private:
  // The MPI channel, under this group's current watchdog timeout.
  MpiProcessGroup& control() {
    control_.set_timeout(timeout());
    return control_;
  }
  void check_on_device(const Tensor& t, const char* op) const {
    LUONG_CHECK(t.defined(), op, ": undefined tensor");
    LUONG_CHECK(t.device() == device_, op, " (nccl backend): tensor ", t.describe(), " is not on this rank's GPU ",
                device_);
  }
  // The comm stream waits for work already queued on the compute stream (the legacy default stream, where
  // the CUDA kernels run), so NCCL reads finished gradients without the host waiting.
  void enter_comm_stream(const std::string& op) {
    cudaEvent_t ready;
    check_cuda(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), rank(), op.c_str());
    check_cuda(cudaEventRecord(ready, cudaStreamLegacy), rank(), op.c_str());
    check_cuda(cudaStreamWaitEvent(comm_stream_, ready, 0), rank(), op.c_str());
    cudaEventDestroy(ready);  // safe: destruction is deferred until the event completes
  }
  // Records completion on the comm stream. The compute stream deliberately does not wait on it here (that
  // would stall the rest of backward behind the collective); Work::wait() blocks the host until the event
  // fires, so kernels queued afterwards (scaling, clipping, the optimizer) read the reduced buffer.
  cudaEvent_t leave_comm_stream(const std::string& op) {
    cudaEvent_t done;
    check_cuda(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), rank(), op.c_str());
    check_cuda(cudaEventRecord(done, comm_stream_), rank(), op.c_str());
    return done;
  }

  MpiProcessGroup control_;
  Device device_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t comm_stream_ = nullptr;
};

}  // namespace

LUONG_REGISTER_PROCESS_GROUP("nccl", [](Device d) { return std::make_unique<NcclProcessGroup>(d); });

}  // namespace luong
#endif  // LUONG_WITH_NCCL
