#include "models/nmt/scores_by_length.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "framework/core/error.h"

namespace luong::nmt {

int64_t source_words(const std::string& line) {
  std::istringstream in(line);
  int64_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

std::vector<LengthBucket> scores_by_source_length(const std::vector<std::string>& sources,
                                                  const std::vector<std::string>& hypotheses,
                                                  const std::vector<std::vector<std::string>>& reference_sets,
                                                  int64_t width, int chrf_word_order) {
  LUONG_CHECK(width >= 1, "by-length: the bucket width must be at least 1 word, got ", width);
  LUONG_CHECK(hypotheses.size() == sources.size(), "by-length: ", hypotheses.size(), " translations for ",
              sources.size(), " source lines");
  for (const auto& refs : reference_sets)
    LUONG_CHECK(refs.size() == sources.size(), "by-length: a reference has ", refs.size(), " lines for ",
                sources.size(), " source lines");
  // Bucket index -> the line numbers in it, in file order.
  std::map<int64_t, std::vector<size_t>> members;
  for (size_t i = 0; i < sources.size(); ++i) {
    const int64_t words = source_words(sources[i]);
    members[words == 0 ? 0 : (words - 1) / width].push_back(i);
  }
  std::vector<LengthBucket> out;
  for (const auto& [index, lines] : members) {
    std::vector<std::string> hyps;
    std::vector<std::vector<std::string>> refs(reference_sets.size());
    for (size_t i : lines) {
      hyps.push_back(hypotheses[i]);
      for (size_t r = 0; r < reference_sets.size(); ++r) refs[r].push_back(reference_sets[r][i]);
    }
    LengthBucket b;
    b.first = index * width + 1, b.last = (index + 1) * width;
    b.sentences = lines.size();
    b.bleu = bleu::corpus_bleu(hyps, refs);
    b.chrf = chrf::corpus_chrf(hyps, refs, chrf_word_order);
    out.push_back(std::move(b));
  }
  return out;
}

std::string format_length_table(const std::vector<LengthBucket>& buckets) {
  std::string out = "source words  sentences    BLEU    chrF  len ratio\n";
  char row[128];
  for (const LengthBucket& b : buckets) {
    const std::string range = std::to_string(b.first) + "-" + std::to_string(b.last);
    std::snprintf(row, sizeof row, "%-12s  %9zu  %6.2f  %6.2f  %9.3f\n", range.c_str(), b.sentences, b.bleu.score,
                  b.chrf.score, b.bleu.ratio);
    out += row;
  }
  return out;
}

nlohmann::json length_buckets_json(const std::vector<LengthBucket>& buckets) {
  nlohmann::json out = nlohmann::json::array();
  for (const LengthBucket& b : buckets)
    out.push_back({{"first", b.first},
                   {"last", b.last},
                   {"sentences", b.sentences},
                   {"bleu", b.bleu.score},
                   {"chrf", b.chrf.score},
                   {"ratio", b.bleu.ratio}});
  return out;
}

}  // namespace luong::nmt
