#include "framework/core/dtype.h"

namespace luong {

Device Device::parse(const std::string& s) {
  if (s == "cpu") return cpu();
  if (s == "cuda") return cuda(0);
  if (s.rfind("cuda:", 0) == 0) {
    const std::string idx = s.substr(5);
    LUONG_CHECK(!idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos,
                "bad device '", s, "' (expected cpu, cuda or cuda:N)");
    return cuda(std::stoi(idx));
  }
  LUONG_FAIL("bad device '", s, "' (expected cpu, cuda or cuda:N)");
}

}  // namespace luong
