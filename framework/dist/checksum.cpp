#include "framework/dist/checksum.h"

#include <iomanip>
#include <sstream>

namespace luong {

uint64_t tensor_checksum(const Tensor& t) {
  LUONG_CHECK(t.defined(), "tensor_checksum: undefined tensor");
  const Tensor host = t.device().is_cpu() ? t : t.to(Device::cpu());
  Fnv1a h;
  h.add_bytes(host.raw(), host.nbytes());
  return h.value();
}

void check_same_on_all_ranks(ProcessGroup& group, uint64_t value, const std::string& what) {
  const std::vector<uint64_t> all = group.all_gather(value);
  std::string differ;
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0]) differ += str(differ.empty() ? "" : ", ", r);
  if (differ.empty()) return;
  std::ostringstream hashes;
  for (size_t r = 0; r < all.size(); ++r)
    hashes << (r ? ", " : "") << "rank " << r << ": 0x" << std::hex << std::setw(16) << std::setfill('0') << all[r]
           << std::dec;
  LUONG_FAIL(what, ": rank(s) ", differ, " differ from rank 0 (", hashes.str(), ")");
}

}  // namespace luong
