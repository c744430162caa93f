// A synthetic in-memory corpus with varied lengths for batching tests.
#pragma once
#include <memory>

#include "framework/core/philox.h"
#include "models/nmt/data/corpus.h"

namespace luong::nmt::testing {

// n examples; example i has ids 4 + (i + k) % 20 so rows are recognisable, lengths drawn in [1, 30].
inline std::shared_ptr<Corpus> varied_corpus(int64_t n, uint64_t seed = 5) {
  auto c = std::make_shared<Corpus>();
  Generator g(seed);
  for (int64_t i = 0; i < n; ++i) {
    ExampleIds e;
    const auto ls = 1 + static_cast<int64_t>(g.below(30)), lt = 1 + static_cast<int64_t>(g.below(30));
    for (int64_t k = 0; k < ls; ++k) e.src.push_back(4 + (i + k) % 20);
    for (int64_t k = 0; k < lt; ++k) e.tgt.push_back(4 + (i * 3 + k) % 20);
    e.line = i + 1;
    c->examples.push_back(std::move(e));
  }
  c->stats.examples = n;
  return c;
}

}  // namespace luong::nmt::testing
