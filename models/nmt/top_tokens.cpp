#include "models/nmt/top_tokens.h"

#include <algorithm>

#include "framework/core/error.h"

namespace luong::nmt {

void top_tokens(const float* row, int64_t V, size_t count, std::vector<std::pair<float, int64_t>>& out,
                const char* decoder, int64_t step, int64_t sentence) {
  out.clear();
  bool has_nan = false;
  for (int64_t v = 0; v < V; ++v) {
    const float x = row[v];
    has_nan = has_nan || x != x;
    if (out.size() == count && !(x > out.back().first)) continue;  // not better than the worst kept
    auto at = std::upper_bound(out.begin(), out.end(), x, [](float value, const std::pair<float, int64_t>& e) {
      return value > e.first;  // after every kept entry >= x: equal values keep the lower id first
    });
    out.insert(at, {x, v});
    if (out.size() > count) out.pop_back();
  }
  LUONG_CHECK(!has_nan, decoder, ": the model gave NaN log-probabilities at output step ", step, " of sentence ",
              sentence, " in this batch; the checkpoint's parameters are probably not finite (a diverged run)");
}

}  // namespace luong::nmt
