// The backend of a single process: every collective is the identity, so a run without mpirun goes through
// exactly the same trainer code path (reducer, token averaging, checksums) with no MPI at all.
#include "framework/dist/backend_registry.h"

namespace luong {
namespace {

class LocalProcessGroup final : public ProcessGroup {
 public:
  explicit LocalProcessGroup(Device device) : device_(device) {}
  std::string backend() const override { return "local"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  Device device() const override { return device_; }

  Work all_reduce_sum(Tensor& flat) override {
    LUONG_CHECK(flat.defined(), "all_reduce_sum: undefined tensor");
    return Work();
  }
  void broadcast(Tensor& t, int root) override {
    LUONG_CHECK(root == 0, "broadcast: root ", root, " out of range for a group of size 1");
  }
  void all_reduce_scalars(std::vector<double>&) override {}
  void all_reduce_scalars(std::vector<int64_t>&) override {}
  std::vector<uint64_t> all_gather(uint64_t value) override { return {value}; }
  void barrier() override {}

 private:
  Device device_;
};

}  // namespace

LUONG_REGISTER_PROCESS_GROUP("local", [](Device d) { return std::make_unique<LocalProcessGroup>(d); });

}  // namespace luong
