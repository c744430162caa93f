#include "framework/dist/parameter_sync.h"

#include "framework/dist/checksum.h"

namespace luong {

void broadcast_parameters(FlatParameters& params, ProcessGroup& group, int root) {
  LUONG_CHECK(params.numel() > 0, "broadcast_parameters: no parameters");
  group.broadcast(params.data(), root);
}

uint64_t parameter_checksum(const FlatParameters& params) {
  LUONG_CHECK(params.numel() > 0, "parameter_checksum: no parameters");
  return tensor_checksum(params.data());
}

void check_parameters_identical(const FlatParameters& params, ProcessGroup& group) {
  check_same_on_all_ranks(group, parameter_checksum(params), "parameters are not identical across ranks");
}

}  // namespace luong
