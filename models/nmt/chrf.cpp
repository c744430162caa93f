#include "models/nmt/chrf.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "framework/core/error.h"
#include "models/nmt/bleu.h"
#include "models/nmt/bleu_tokenizer.h"
#include "models/nmt/reference_sets.h"

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

// sacreBLEU's words for chrF++: split on whitespace; a word of two or more characters loses one punctuation
// character (ASCII only) at its end, or else at its start, as a word of its own ("(hi)" -> "(hi", ")"). A
// byte test is a code-point test here: an ASCII byte is never part of a longer character.
std::vector<std::string> chrf_words(const std::string& s) {
  static const std::string kPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  auto is_punct = [](char c) { return kPunctuation.find(c) != std::string::npos; };
  std::vector<std::string> out;
  for (const std::string& w : bleu::split_whitespace(s)) {
    if (w.size() > 1 && is_punct(w.back())) {
      out.push_back(w.substr(0, w.size() - 1));
      out.push_back(w.substr(w.size() - 1));
    } else if (w.size() > 1 && is_punct(w.front())) {
      out.push_back(w.substr(0, 1));
      out.push_back(w.substr(1));
    } else {
      out.push_back(w);
    }
  }
  return out;
}

// The word n-grams of order n (words joined by a space, as sacreBLEU keys them) with their counts.
std::unordered_map<std::string, int64_t> word_ngram_counts(const std::vector<std::string>& words, size_t n) {
  std::unordered_map<std::string, int64_t> counts;
  for (size_t i = 0; i + n <= words.size(); ++i) {
    std::string gram = words[i];
    for (size_t k = 1; k < n; ++k) gram += " " + words[i + k];
    ++counts[gram];
  }
  return counts;
}

// One order's statistics from the two sides' n-gram counts (`ref_total` reference n-grams in all).
template <class Counts>
void add_order(const Counts& hyp, const Counts& ref, int64_t ref_total, size_t k, ChrfStats& s) {
  int64_t hyp_total = 0, matched = 0;
  for (const auto& [gram, count] : hyp) {
    hyp_total += count;
    if (const auto it = ref.find(gram); it != ref.end()) matched += std::min(count, it->second);
  }
  s.ref[k] = ref_total;
  s.hyp[k] = ref.empty() ? 0 : hyp_total;  // sacreBLEU: no reference n-grams, no hypothesis count
  s.match[k] = matched;
}

std::string metric_name(int word_order) { return "chrF" + std::to_string(kBeta) + std::string(word_order, '+'); }

void check_word_order(int word_order) {
  LUONG_CHECK(word_order >= 0 && word_order <= kMaxWordOrder, "chrF: word order ", word_order,
              " is not supported (0 for chrF, ", kMaxWordOrder, " for chrF++)");
}

}  // namespace

ChrfStats& ChrfStats::operator+=(const ChrfStats& o) {
  for (size_t n = 0; n < hyp.size(); ++n) hyp[n] += o.hyp[n], ref[n] += o.ref[n], match[n] += o.match[n];
  return *this;
}

ChrfStats sentence_stats(const std::string& hypothesis, const std::string& reference, int word_order) {
  check_word_order(word_order);
  const Characters h(hypothesis), r(reference);
  ChrfStats s;
  for (size_t n = 1; n <= static_cast<size_t>(kCharOrder); ++n)
    add_order(ngram_counts(h, n), ngram_counts(r, n), r.size() >= n ? static_cast<int64_t>(r.size() - n + 1) : 0, n - 1,
              s);
  if (word_order > 0) {
    const std::vector<std::string> hw = chrf_words(hypothesis), rw = chrf_words(reference);
    for (size_t n = 1; n <= static_cast<size_t>(word_order); ++n)
      add_order(word_ngram_counts(hw, n), word_ngram_counts(rw, n),
                rw.size() >= n ? static_cast<int64_t>(rw.size() - n + 1) : 0, kCharOrder + n - 1, s);
  }
  return s;
}

ChrfScore score_from_stats(const ChrfStats& s, int word_order) {
  check_word_order(word_order);
  // The average precision and recall over the orders where both sides have n-grams, then their F-beta (the
  // word orders are zero without word n-grams, and so left out).
  double precision = 0, recall = 0;
  int orders = 0;
  for (size_t n = 0; n < s.hyp.size(); ++n) {
    if (s.hyp[n] == 0 || s.ref[n] == 0) continue;
    precision += static_cast<double>(s.match[n]) / static_cast<double>(s.hyp[n]);
    recall += static_cast<double>(s.match[n]) / static_cast<double>(s.ref[n]);
    ++orders;
  }
  ChrfScore out;
  out.word_order = word_order;
  if (orders == 0) return out;
  precision /= orders, recall /= orders;
  // sacreBLEU's operations in its order (this file is compiled without fused multiply-adds), so a score agrees
  // to the last bit and the significance tests' comparisons of scores come out as sacreBLEU's.
  const double b2 = kBeta * kBeta;
  if (precision + recall > 0) {
    double f = (1 + b2) * precision * recall;
    f /= b2 * precision + recall;
    out.score = 100 * f;
  }
  return out;
}

ChrfStats sentence_stats(const std::string& hypothesis, const std::vector<std::string>& references, int word_order) {
  LUONG_CHECK(!references.empty(), "chrF: a hypothesis without a reference");
  if (references.size() == 1) return sentence_stats(hypothesis, references[0], word_order);  // nothing to pick
  // sacreBLEU keeps the first reference with the strictly highest sentence-level F-score.
  ChrfStats best;
  double best_score = -1;
  for (const std::string& reference : references) {
    const ChrfStats s = sentence_stats(hypothesis, reference, word_order);
    const double score = score_from_stats(s, word_order).score;
    if (score > best_score) best_score = score, best = s;
  }
  return best;
}

ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references,
                      int word_order) {
  return corpus_chrf(hypotheses, std::vector<std::vector<std::string>>{references}, word_order);
}

ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& reference_sets, int word_order) {
  ReferenceSets refs(reference_sets, hypotheses.size(), "chrF");
  ChrfStats total;
  for (size_t i = 0; i < hypotheses.size(); ++i) total += sentence_stats(hypotheses[i], refs.of(i), word_order);
  ChrfScore score = score_from_stats(total, word_order);
  score.nrefs = refs.count();
  return score;
}

std::string signature(int word_order, int nrefs) {
  check_word_order(word_order);
  return str("nrefs:", nrefs, "|case:mixed|eff:yes|nc:", kCharOrder, "|nw:", word_order,
             "|space:no|version:", bleu::kSacreBleuVersion);
}

std::string ChrfScore::format(int width, const std::string& sig) const {
  const std::string name = metric_name(word_order);
  std::string value = bleu::fixed_decimals(score, width);
  if (confidence && confidence->mean > 0) value += " (" + confidence->text(width) + ")";
  return (sig.empty() ? name : name + "|" + sig) + " = " + value;
}

std::string ChrfScore::signature() const {
  const std::string sig = chrf::signature(word_order, nrefs);
  return confidence ? bleu::with_test_fields(sig, confidence->signature_fields()) : sig;
}

std::string ChrfScore::to_json(int width) const {
  const std::string sig = signature();
  nlohmann::ordered_json j;
  j["name"] = metric_name(word_order);
  j["score"] = std::stod(bleu::fixed_decimals(score, width));
  j["signature"] = sig;
  bleu::add_confidence_json(j, confidence, width);
  for (const auto& [key, value] : bleu::signature_fields(sig)) j[key] = value;
  j["score_unrounded"] = score;
  return j.dump(1);
}

}  // namespace luong::chrf
