#include "framework/io/json_text.h"

namespace luong {

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace luong
