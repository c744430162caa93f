// Given translations read for the commands that take them (`luong score`, `luong align`): a source file and
// a line-aligned target file, and the pairs a model can condition on.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "models/nmt/data/corpus.h"

namespace luong::cli {

// Target k belongs to source line its_source[k] (0-based): one each for --tgt, any for an n-best list.
struct SentencePairs {
  std::vector<std::string> sources, targets;
  std::vector<size_t> its_source;
};

// --src and --tgt, one target per source line; `command` ("score") starts the error when the counts differ.
SentencePairs read_line_aligned(const std::string& src, const std::string& tgt, const std::string& command);

// The pairs as parallel text, numbered by their entry (1-based); those whose source is blank are left out (and
// counted in empty_skipped): the model conditions on the source, and has nothing to condition on there. A
// blank target stays (</s> alone).
nmt::ParallelText pairs_with_a_source(const SentencePairs& pairs);

}  // namespace luong::cli
