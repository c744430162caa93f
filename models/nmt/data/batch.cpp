#include "models/nmt/data/batch.h"

#include <algorithm>

#include "framework/core/error.h"

namespace luong::nmt {

Batch make_batch(const Corpus& corpus, const std::vector<int64_t>& indices) {
  LUONG_CHECK(!indices.empty(), "make_batch: no examples");
  const auto n = static_cast<int64_t>(indices.size());
  int64_t max_src = 1, max_tgt = 1;
  for (int64_t i : indices) {
    LUONG_CHECK(i >= 0 && i < static_cast<int64_t>(corpus.examples.size()), "make_batch: example ", i,
                " out of range [0, ", corpus.examples.size(), ")");
    const Example& e = corpus.examples[static_cast<size_t>(i)];
    max_src = std::max<int64_t>(max_src, static_cast<int64_t>(e.src.size()));
    max_tgt = std::max<int64_t>(max_tgt, static_cast<int64_t>(e.tgt.size()) + 1);
  }
  std::vector<int64_t> src(static_cast<size_t>(n * max_src), Vocabulary::kPad);
  std::vector<int64_t> tin(static_cast<size_t>(n * max_tgt), Vocabulary::kPad);
  std::vector<int64_t> tout(static_cast<size_t>(n * max_tgt), Vocabulary::kPad);
  std::vector<int64_t> slen(static_cast<size_t>(n)), tlen(static_cast<size_t>(n));
  Batch b;
  for (int64_t r = 0; r < n; ++r) {
    const Example& e = corpus.examples[static_cast<size_t>(indices[static_cast<size_t>(r)])];
    const auto s = static_cast<int64_t>(e.src.size()), t = static_cast<int64_t>(e.tgt.size());
    std::copy(e.src.begin(), e.src.end(), src.begin() + r * max_src);
    // Teacher forcing: the decoder reads <s> y_1..y_n and predicts y_1..y_n </s>.
    tin[static_cast<size_t>(r * max_tgt)] = Vocabulary::kBos;
    std::copy(e.tgt.begin(), e.tgt.end(), tin.begin() + r * max_tgt + 1);
    std::copy(e.tgt.begin(), e.tgt.end(), tout.begin() + r * max_tgt);
    tout[static_cast<size_t>(r * max_tgt + t)] = Vocabulary::kEos;
    slen[static_cast<size_t>(r)] = s;
    tlen[static_cast<size_t>(r)] = t + 1;
    b.src_tokens += s;
    b.tgt_tokens += t + 1;
  }
  b.src = Tensor::from_ids(src, {n, max_src});
  b.src_lengths = Tensor::from_ids(slen, {n});
  b.tgt_in = Tensor::from_ids(tin, {n, max_tgt});
  b.tgt_out = Tensor::from_ids(tout, {n, max_tgt});
  b.tgt_lengths = Tensor::from_ids(tlen, {n});
  b.sentences = n;
  b.global_sentences = n;
  b.global_tgt_tokens = b.tgt_tokens;
  b.indices = indices;
  return b;
}

}  // namespace luong::nmt
