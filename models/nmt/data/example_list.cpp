#include "models/nmt/data/example_list.h"

#include <limits>

#include "framework/core/error.h"

namespace luong::nmt {
namespace {

std::vector<int32_t> narrow(const std::vector<int64_t>& ids) {
  std::vector<int32_t> out(ids.size());
  for (size_t k = 0; k < ids.size(); ++k) {
    LUONG_CHECK(ids[k] >= 0 && ids[k] <= std::numeric_limits<int32_t>::max(), "token id ", ids[k],
                " is outside [0, 2^31)");
    out[k] = static_cast<int32_t>(ids[k]);
  }
  return out;
}

}  // namespace

std::vector<int64_t> to_ids(std::span<const int32_t> ids) { return {ids.begin(), ids.end()}; }

ExampleList::ExampleList(std::initializer_list<ExampleIds> pairs) {
  for (const ExampleIds& p : pairs) push_back(p);
}

void ExampleList::push_back(const ExampleIds& pair) { push_back(narrow(pair.src), narrow(pair.tgt), pair.line); }

void ExampleList::push_back(const Example& pair) {
  // The spans may point into ids_ itself, which the append can move: copied out first.
  const std::vector<int32_t> src(pair.src.begin(), pair.src.end()), tgt(pair.tgt.begin(), pair.tgt.end());
  push_back(src, tgt, pair.line);
}

void ExampleList::push_back(std::span<const int32_t> src, std::span<const int32_t> tgt, int64_t line) {
  LUONG_CHECK(src.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()) &&
                  tgt.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()),
              "a sentence of more than 2^31 - 1 tokens");
  entries_.push_back(
      {static_cast<int64_t>(ids_.size()), static_cast<int32_t>(src.size()), static_cast<int32_t>(tgt.size()), line});
  ids_.insert(ids_.end(), src.begin(), src.end());
  ids_.insert(ids_.end(), tgt.begin(), tgt.end());
}

}  // namespace luong::nmt
