// Corpora of random sentence pairs for tests (ids from 4 up: 0-3 are <pad>, <s>, </s>, <unk>).
#pragma once
#include <cstdint>

#include "framework/core/philox.h"
#include "models/nmt/data/corpus.h"

namespace luong::testing {

// Per side: lengths drawn from [min_len, max_len], ids from [4, 4 + ids).
struct RandomSide {
  int64_t ids, min_len, max_len;
};

// `pairs` pairs numbered as lines 1, 2, ...; for each, the source's length then its ids, then the target's, all
// from `gen` (so a given seed always gives the same corpus).
inline nmt::Corpus random_pairs(Generator& gen, int64_t pairs, RandomSide src, RandomSide tgt) {
  nmt::Corpus c;
  auto sentence = [&gen](const RandomSide& side) {
    std::vector<int64_t> ids;
    const int64_t n =
        side.min_len + static_cast<int64_t>(gen.below(static_cast<uint64_t>(side.max_len - side.min_len + 1)));
    for (int64_t k = 0; k < n; ++k) ids.push_back(4 + static_cast<int64_t>(gen.below(static_cast<uint64_t>(side.ids))));
    return ids;
  };
  for (int64_t i = 0; i < pairs; ++i) {
    nmt::ExampleIds e;
    e.src = sentence(src);
    e.tgt = sentence(tgt);
    e.line = i + 1;
    c.examples.push_back(e);
  }
  return c;
}

}  // namespace luong::testing
