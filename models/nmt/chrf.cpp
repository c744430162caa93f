#include "models/nmt/chrf.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "framework/core/error.h"
#include "models/nmt/bleu.h"
#include "models/nmt/bleu_tokenizer.h"

namespace luong::chrf {
namespace {

// The text without whitespace (Python's ''.join(s.split())) and the byte offset where each of its code points
// starts, plus its end: n-grams are counted over code points, not bytes.
struct Characters {
  std::string text;
  std::vector<size_t> starts;
  explicit Characters(const std::string& s) {
    for (const std::string& part : bleu::split_whitespace(s)) text += part;
    for (size_t i = 0; i < text.size(); ++i)
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);  // not a continuation byte
    starts.push_back(text.size());
  }
  size_t size() const { return starts.size() - 1; }
  std::string_view ngram(size_t i, size_t n) const { return {text.data() + starts[i], starts[i + n] - starts[i]}; }
};

// Each n-gram of order n with its count; the views point into `c`.
std::unordered_map<std::string_view, int64_t> ngram_counts(const Characters& c, size_t n) {
  std::unordered_map<std::string_view, int64_t> counts;
  for (size_t i = 0; i + n <= c.size(); ++i) ++counts[c.ngram(i, n)];
  return counts;
}

std::string metric_name() { return "chrF" + std::to_string(kBeta); }

}  // namespace

ChrfStats& ChrfStats::operator+=(const ChrfStats& o) {
  for (int n = 0; n < kCharOrder; ++n) hyp[n] += o.hyp[n], ref[n] += o.ref[n], match[n] += o.match[n];
  return *this;
}

ChrfStats sentence_stats(const std::string& hypothesis, const std::string& reference) {
  const Characters h(hypothesis), r(reference);
  ChrfStats s;
  for (size_t n = 1; n <= static_cast<size_t>(kCharOrder); ++n) {
    const auto ref_counts = ngram_counts(r, n);
    int64_t hyp_total = 0, matched = 0;
    for (const auto& [gram, count] : ngram_counts(h, n)) {
      hyp_total += count;
      if (const auto it = ref_counts.find(gram); it != ref_counts.end()) matched += std::min(count, it->second);
    }
    const size_t k = n - 1;
    s.ref[k] = r.size() >= n ? static_cast<int64_t>(r.size() - n + 1) : 0;
    s.hyp[k] = ref_counts.empty() ? 0 : hyp_total;  // sacreBLEU: no reference n-grams, no hypothesis count
    s.match[k] = matched;
  }
  return s;
}

ChrfScore score_from_stats(const ChrfStats& s) {
  // The average precision and recall over the orders where both sides have n-grams, then their F-beta.
  double precision = 0, recall = 0;
  int orders = 0;
  for (int n = 0; n < kCharOrder; ++n) {
    if (s.hyp[n] == 0 || s.ref[n] == 0) continue;
    precision += static_cast<double>(s.match[n]) / static_cast<double>(s.hyp[n]);
    recall += static_cast<double>(s.match[n]) / static_cast<double>(s.ref[n]);
    ++orders;
  }
  ChrfScore out;
  if (orders == 0) return out;
  precision /= orders, recall /= orders;
  const double b2 = kBeta * kBeta;
  if (precision + recall > 0) out.score = 100.0 * (1 + b2) * precision * recall / (b2 * precision + recall);
  return out;
}

ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  if (hypotheses.size() != references.size())
    LUONG_FAIL("chrF: ", hypotheses.size(), " hypotheses but ", references.size(), " references");
  ChrfStats total;
  for (size_t i = 0; i < hypotheses.size(); ++i) total += sentence_stats(hypotheses[i], references[i]);
  return score_from_stats(total);
}

std::string signature() {
  return str("nrefs:1|case:mixed|eff:yes|nc:", kCharOrder, "|nw:0|space:no|version:", bleu::kSacreBleuVersion);
}

std::string ChrfScore::format(int width, const std::string& sig) const {
  return (sig.empty() ? metric_name() : metric_name() + "|" + sig) + " = " + bleu::fixed_decimals(score, width);
}

std::string ChrfScore::to_json(int width) const {
  const std::string sig = signature();
  nlohmann::ordered_json j;
  j["name"] = metric_name();
  j["score"] = std::stod(bleu::fixed_decimals(score, width));
  j["signature"] = sig;
  for (const auto& [key, value] : bleu::signature_fields(sig)) j[key] = value;
  j["score_unrounded"] = score;
  return j.dump(1);
}

}  // namespace luong::chrf
