#include "framework/dist/mpi_process_group.h"

#include <algorithm>
#include <climits>

#include "framework/dist/backend_registry.h"
#include "framework/dist/bootstrap.h"

namespace luong {
namespace {

// MPI counts are int: larger buffers go in chunks of at most this many elements.
constexpr int64_t kMaxChunk = INT_MAX;

void check_mpi(int rc, int rank, const std::string& op) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  LUONG_FAIL("rank ", rank, ": ", op, " failed: ", std::string(text, static_cast<size_t>(len)));
}

MPI_Datatype mpi_float_type(const Tensor& t, const char* op) {
  switch (t.dtype()) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    default: LUONG_FAIL(op, " (mpi backend): dtype ", t.dtype(), " is not supported (need float32 or float64)");
  }
}

void check_cpu(const Tensor& t, const char* op) {
  LUONG_CHECK(t.defined(), op, ": undefined tensor");
  LUONG_CHECK(t.device().is_cpu(), op, " (mpi backend): tensor ", t.describe(),
              " is not on the CPU (use the nccl backend for CUDA tensors)");
}

// An in-flight MPI collective: its requests, the storage it reads and writes (kept alive until done), and
// what the watchdog needs to name it.
class MpiWork final : public Work::Impl {
 public:
  MpiWork(std::vector<MPI_Request> requests, Tensor keep_alive, int rank, std::string op,
          std::chrono::milliseconds timeout)
      : requests_(std::move(requests)), keep_alive_(std::move(keep_alive)), rank_(rank), op_(std::move(op)),
        timeout_(timeout) {}
  // MPI may still be writing into the buffer: never let it go before the collective ends.
  ~MpiWork() override {
    if (!done_ && mpi_is_initialized()) wait();
  }

  bool test() override {
    if (done_) return true;
    int flag = 0;
    check_mpi(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &flag, MPI_STATUSES_IGNORE),
              rank_, op_);
    done_ = flag != 0;
    return done_;
  }
  void wait() override {
    wait_with_watchdog([this] { return test(); }, timeout_, rank_, op_);
  }

 private:
  std::vector<MPI_Request> requests_;
  Tensor keep_alive_;
  int rank_;
  std::string op_;
  std::chrono::milliseconds timeout_;
  bool done_ = false;
};

}  // namespace

MpiProcessGroup::MpiProcessGroup(Device device) : device_(device) {
  ensure_mpi_initialized();
  LUONG_CHECK(device.is_cpu(), "mpi backend: device ", device, " is not supported (the mpi backend reduces CPU "
              "tensors; CUDA training uses the nccl backend)");
  // A private communicator: collectives of different groups (e.g. several tests) never match each other.
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  // Local rank from the machine topology rather than launcher variables, so srun and mpirun agree.
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
}

MpiProcessGroup::~MpiProcessGroup() {
  if (comm_ != MPI_COMM_NULL && mpi_is_initialized()) MPI_Comm_free(&comm_);
}

void MpiProcessGroup::wait_blocking(MPI_Request& request, const std::string& op) {
  wait_with_watchdog(
      [&] {
        int flag = 0;
        check_mpi(MPI_Test(&request, &flag, MPI_STATUS_IGNORE), rank_, op);
        return flag != 0;
      },
      timeout(), rank_, op);
}

Work MpiProcessGroup::all_reduce_sum(Tensor& flat) {
  check_cpu(flat, "all_reduce_sum");
  const MPI_Datatype type = mpi_float_type(flat, "all_reduce_sum");
  const std::string op = str("all_reduce_sum of ", flat.describe());
  std::vector<MPI_Request> requests;
  char* base = static_cast<char*>(flat.raw());
  for (int64_t start = 0; start < flat.numel(); start += kMaxChunk) {
    const int64_t n = std::min(kMaxChunk, flat.numel() - start);
    MPI_Request r = MPI_REQUEST_NULL;
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, base + start * static_cast<int64_t>(dtype_size(flat.dtype())),
                             static_cast<int>(n), type, MPI_SUM, comm_, &r),
              rank_, op);
    requests.push_back(r);
  }
  return Work(std::make_shared<MpiWork>(std::move(requests), flat, rank_, op, timeout()));
}

void MpiProcessGroup::broadcast(Tensor& t, int root) {
  check_cpu(t, "broadcast");
  broadcast_bytes(t.raw(), t.nbytes(), root, "broadcast");
}

void MpiProcessGroup::broadcast_bytes(void* data, size_t bytes, int root, const char* what) {
  LUONG_CHECK(root >= 0 && root < size_, what, ": root ", root, " out of range for a group of size ", size_);
  const std::string op = str(what, " of ", bytes, " bytes from rank ", root);
  char* p = static_cast<char*>(data);
  for (size_t start = 0; start < bytes; start += static_cast<size_t>(kMaxChunk)) {
    const size_t n = std::min(static_cast<size_t>(kMaxChunk), bytes - start);
    MPI_Request r = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibcast(p + start, static_cast<int>(n), MPI_BYTE, root, comm_, &r), rank_, op);
    wait_blocking(r, op);
  }
}

void MpiProcessGroup::all_reduce_scalars(std::vector<double>& values) {
  const std::string op = str("all_reduce_scalars of ", values.size(), " doubles");
  MPI_Request r = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                           comm_, &r),
            rank_, op);
  wait_blocking(r, op);
}

void MpiProcessGroup::all_reduce_scalars(std::vector<int64_t>& values) {
  const std::string op = str("all_reduce_scalars of ", values.size(), " int64s");
  MPI_Request r = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_SUM,
                           comm_, &r),
            rank_, op);
  wait_blocking(r, op);
}

std::vector<uint64_t> MpiProcessGroup::all_gather(uint64_t value) {
  std::vector<uint64_t> out(static_cast<size_t>(size_));
  MPI_Request r = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(&value, 1, MPI_UINT64_T, out.data(), 1, MPI_UINT64_T, comm_, &r), rank_, "all_gather");
  wait_blocking(r, "all_gather");
  return out;
}

void MpiProcessGroup::barrier() {
  MPI_Request r = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm_, &r), rank_, "barrier");
  wait_blocking(r, "barrier");
}

LUONG_REGISTER_PROCESS_GROUP("mpi", [](Device d) { return std::make_unique<MpiProcessGroup>(d); });

}  // namespace luong
