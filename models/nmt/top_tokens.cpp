#include "models/nmt/top_tokens.h"

#include <algorithm>

#include "framework/core/error.h"

namespace luong::nmt {

void top_tokens(const float* row, int64_t V, size_t count, std::vector<std::pair<float, int64_t>>& out,
                const char* decoder, int64_t step, int64_t sentence, const std::vector<int64_t>& excluded) {
  out.clear();
  bool has_nan = false;
  for (int64_t v = 0; v < V; ++v) {
    const float x = row[v];
    has_nan = has_nan || x != x;
    if (out.size() == count && !(x > out.back().first)) continue;  // not better than the worst kept
    // Checked only for would-be entries, so the scan of the row stays one comparison per token.
    if (std::find(excluded.begin(), excluded.end(), v) != excluded.end()) continue;
    auto at = std::upper_bound(out.begin(), out.end(), x, [](float value, const std::pair<float, int64_t>& e) {
      return value > e.first;  // after every kept entry >= x: equal values keep the lower id first
    });
    out.insert(at, {x, v});
    if (out.size() > count) out.pop_back();
  }
  require_no_nan(has_nan, decoder, step, sentence);
}

void require_no_nan(bool has_nan, const char* decoder, int64_t step, int64_t sentence) {
  LUONG_CHECK(!has_nan, decoder, ": the model gave NaN log-probabilities at output step ", step, " of sentence ",
              sentence, " in this batch; the checkpoint's parameters are probably not finite (a diverged run)");
}

std::vector<int64_t> never_output_tokens(int64_t pad_id, int64_t bos) {
  return pad_id == bos ? std::vector<int64_t>{pad_id} : std::vector<int64_t>{pad_id, bos};
}

}  // namespace luong::nmt
