#include "models/nmt/data/interned_tokens.h"

#include <limits>

#include "framework/core/error.h"

namespace luong::nmt {

int32_t TokenTable::intern(std::string token) {
  const auto next = static_cast<int32_t>(texts_.size());
  const auto [it, added] = ids_.try_emplace(std::move(token), next);
  if (added) {
    LUONG_CHECK(texts_.size() < static_cast<size_t>(std::numeric_limits<int32_t>::max()),
                "corpus: more than 2^31 - 1 distinct tokens");
    texts_.push_back(&it->first);
  }
  return it->second;
}

}  // namespace luong::nmt
