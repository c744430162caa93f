#include "launch/sentence_pairs.h"

#include "framework/core/error.h"
#include "models/nmt/data/text_reader.h"

namespace luong::cli {

SentencePairs read_line_aligned(const std::string& src, const std::string& tgt, const std::string& command) {
  SentencePairs p;
  p.sources = nmt::lines_of_file_text(nmt::read_text_file(src), src);
  p.targets = nmt::lines_of_file_text(nmt::read_text_file(tgt), tgt);
  if (p.sources.size() != p.targets.size())
    LUONG_FAIL(command, ": '", src, "' has ", p.sources.size(), " lines but '", tgt, "' has ", p.targets.size(),
               " lines (the files must be line-aligned)");
  for (size_t i = 0; i < p.sources.size(); ++i) p.its_source.push_back(i);
  return p;
}

nmt::ParallelText pairs_with_a_source(const SentencePairs& pairs) {
  nmt::ParallelText text;
  text.lines = static_cast<int64_t>(pairs.targets.size());
  for (size_t k = 0; k < pairs.targets.size(); ++k) {
    const std::string& src = pairs.sources[pairs.its_source[k]];
    if (nmt::is_blank_line(src)) {
      ++text.empty_skipped;
      continue;
    }
    text.src.push_back(src);
    text.tgt.push_back(pairs.targets[k]);
    text.line_numbers.push_back(static_cast<int64_t>(k) + 1);
  }
  return text;
}

}  // namespace luong::cli
