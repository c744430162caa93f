#include "launch/bleu_by_length.h"

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "framework/io/json_text.h"
#include "models/nmt/bleu.h"
#include "models/nmt/chrf.h"
#include "models/nmt/scores_by_length.h"

namespace luong::cli {
namespace {

const char* key_of(significance::Metric m) { return m == significance::Metric::kBleu ? "bleu" : "chrf"; }

// `text` right-aligned in `width` characters (as it is when longer).
std::string right_aligned(const std::string& text, size_t width) {
  return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
}

double score_of(const nmt::LengthBucket& b, significance::Metric m) {
  return m == significance::Metric::kBleu ? b.bleu.score : b.chrf.score;
}

}  // namespace

void print_scores_by_length(const SystemsScoring& how, const std::vector<ScoredSystem>& systems,
                            const std::vector<std::string>& sources, int64_t width) {
  // Every system's buckets: the same sentences in each, since the grouping is by the source alone.
  std::vector<std::vector<nmt::LengthBucket>> per_system;
  for (const ScoredSystem& s : systems)
    per_system.push_back(nmt::scores_by_source_length(sources, s.lines, how.refs, width, how.chrf_word_order));
  const std::vector<nmt::LengthBucket>& buckets = per_system.front();
  const int nrefs = static_cast<int>(how.refs.size());
  const auto signature = [&](significance::Metric m) {
    return m == significance::Metric::kBleu ? bleu::signature(nrefs) : chrf::signature(how.chrf_word_order, nrefs);
  };
  if (how.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (size_t b = 0; b < buckets.size(); ++b) {
      nlohmann::json row{{"first", buckets[b].first}, {"last", buckets[b].last}, {"sentences", buckets[b].sentences}};
      for (significance::Metric m : how.metrics) {
        nlohmann::json scores = nlohmann::json::object();
        for (size_t s = 0; s < systems.size(); ++s) scores[systems[s].name] = score_of(per_system[s][b], m);
        row[key_of(m)] = scores;
      }
      rows.push_back(row);
    }
    nlohmann::json out{{"by_length", rows}, {"systems", nlohmann::json::array()}};
    for (const ScoredSystem& s : systems) out["systems"].push_back(s.name);
    for (significance::Metric m : how.metrics) out[std::string(key_of(m)) + "_signature"] = signature(m);
    std::cout << json_text(out) << "\n";
    return;
  }
  for (significance::Metric m : how.metrics) {
    const bool is_bleu = m == significance::Metric::kBleu;
    std::cout << (is_bleu               ? "BLEU"
                  : how.chrf_word_order ? "chrF2++"
                                        : "chrF2")
              << " by source length (" << signature(m) << ")\n";
    std::vector<size_t> widths;
    std::cout << "source words  sentences";
    for (const ScoredSystem& s : systems) {
      widths.push_back(std::max<size_t>(s.name.size(), 6));
      std::cout << "  " << right_aligned(s.name, widths.back());
    }
    std::cout << "\n";
    for (size_t b = 0; b < buckets.size(); ++b) {
      const std::string range = std::to_string(buckets[b].first) + "-" + std::to_string(buckets[b].last);
      const std::string n = std::to_string(buckets[b].sentences);
      std::cout << range << std::string(range.size() < 12 ? 12 - range.size() : 0, ' ') << "  " << right_aligned(n, 9);
      for (size_t s = 0; s < systems.size(); ++s) {
        const std::string v = bleu::fixed_decimals(score_of(per_system[s][b], m), how.width);
        std::cout << "  " << right_aligned(v, widths[s]);
      }
      std::cout << "\n";
    }
  }
}

}  // namespace luong::cli
