#include "models/nmt/bleu.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "framework/core/error.h"
#include "framework/core/utf8.h"
#include "models/nmt/bleu_tokenizer.h"
#include "models/nmt/reference_sets.h"

namespace luong::bleu {
namespace {

// Every n-gram of orders 1..4 keyed by its tokens joined with ' ' (tokens never contain spaces, so the
// key is unique and its order is implied).
std::unordered_map<std::string, int64_t> ngram_counts(const std::vector<std::string>& tokens) {
  std::unordered_map<std::string, int64_t> counts;
  for (size_t n = 1; n <= static_cast<size_t>(kMaxOrder); ++n) {
    for (size_t i = 0; i + n <= tokens.size(); ++i) {
      std::string key = tokens[i];
      for (size_t k = 1; k < n; ++k) key += ' ' + tokens[i + k];
      ++counts[key];
    }
  }
  return counts;
}

size_t order_of(const std::string& key) {
  size_t n = 1;
  for (char c : key) n += c == ' ';
  return n;
}

std::vector<std::string> tokens_of(const std::string& raw) {
  return split_whitespace(tokenize_13a(rstrip_whitespace(raw)));
}

// sacreBLEU floors log(0) at this value rather than -inf.
double floored_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

}  // namespace

std::string fixed_decimals(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::vector<std::pair<std::string, std::string>> signature_fields(const std::string& sig) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t start = 0; start <= sig.size();) {
    size_t end = sig.find('|', start);
    if (end == std::string::npos) end = sig.size();
    const std::string pair = sig.substr(start, end - start);
    const size_t colon = pair.find(':');
    out.emplace_back(pair.substr(0, colon), colon == std::string::npos ? "" : pair.substr(colon + 1));
    start = end + 1;
  }
  return out;
}

BleuStats& BleuStats::operator+=(const BleuStats& o) {
  hyp_len += o.hyp_len;
  ref_len += o.ref_len;
  for (int n = 0; n < kMaxOrder; ++n) {
    correct[n] += o.correct[n];
    total[n] += o.total[n];
  }
  return *this;
}

BleuStats sentence_stats(const std::string& hypothesis, const std::string& reference) {
  return sentence_stats(hypothesis, std::vector<std::string>{reference});
}

BleuStats sentence_stats(const std::string& hypothesis, const std::vector<std::string>& references) {
  LUONG_CHECK(!references.empty(), "bleu: a hypothesis without a reference");
  const auto hyp = tokens_of(hypothesis);
  BleuStats s;
  s.hyp_len = static_cast<int64_t>(hyp.size());
  // An n-gram's largest count in any one reference bounds its matches.
  std::unordered_map<std::string, int64_t> ref_counts;
  int64_t closest_diff = -1;
  for (const std::string& reference : references) {
    const auto ref = tokens_of(reference);
    const auto len = static_cast<int64_t>(ref.size()), diff = std::abs(s.hyp_len - len);
    if (closest_diff < 0 || diff < closest_diff || (diff == closest_diff && len < s.ref_len))
      closest_diff = diff, s.ref_len = len;
    for (const auto& [key, count] : ngram_counts(ref)) {
      int64_t& most = ref_counts[key];
      most = std::max(most, count);
    }
  }
  for (const auto& [key, count] : ngram_counts(hyp)) {
    const size_t n = order_of(key) - 1;
    s.total[n] += count;
    auto it = ref_counts.find(key);
    if (it != ref_counts.end()) s.correct[n] += std::min(count, it->second);  // clipped counts
  }
  return s;
}

BleuScore score_from_stats(const BleuStats& st) {
  BleuScore r;
  r.hyp_len = st.hyp_len;
  r.ref_len = st.ref_len;
  r.counts = st.correct;
  r.totals = st.total;
  r.ratio = st.ref_len ? static_cast<double>(st.hyp_len) / static_cast<double>(st.ref_len) : 0.0;
  r.bp = 1.0;
  if (st.hyp_len < st.ref_len)
    r.bp = st.hyp_len > 0 ? std::exp(1.0 - static_cast<double>(st.ref_len) / static_cast<double>(st.hyp_len)) : 0.0;
  bool any_match = false;
  for (auto c : st.correct) any_match = any_match || c != 0;
  if (!any_match) return r;  // score and precisions stay 0, as in sacreBLEU

  // The same operations in the same order as sacreBLEU, so the result agrees to the last bit.
  double smooth = 1.0;
  for (int n = 0; n < kMaxOrder; ++n) {
    if (st.total[n] == 0) break;
    if (st.correct[n] == 0) {
      smooth *= 2;
      r.precisions[n] = 100.0 / (smooth * static_cast<double>(st.total[n]));
    } else {
      r.precisions[n] = 100.0 * static_cast<double>(st.correct[n]) / static_cast<double>(st.total[n]);
    }
  }
  double log_sum = 0.0;
  for (double p : r.precisions) log_sum += floored_log(p);
  r.score = r.bp * std::exp(log_sum / kMaxOrder);
  return r;
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  return corpus_bleu(hypotheses, std::vector<std::vector<std::string>>{references});
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& reference_sets) {
  ReferenceSets refs(reference_sets, hypotheses.size(), "bleu");
  BleuStats total;
  for (size_t i = 0; i < hypotheses.size(); ++i) total += sentence_stats(hypotheses[i], refs.of(i));
  BleuScore score = score_from_stats(total);
  score.nrefs = refs.count();
  return score;
}

std::string ConfidenceEstimate::signature_fields() const { return str("bs:", resamples, "|seed:", seed); }

std::string ConfidenceEstimate::text(int width) const {
  return "\u03bc = " + fixed_decimals(mean, width) + " \u00b1 " + fixed_decimals(ci, width);
}

std::string with_test_fields(const std::string& sig, const std::string& fields) {
  const size_t bar = sig.find('|');
  return bar == std::string::npos ? sig + "|" + fields : sig.substr(0, bar + 1) + fields + sig.substr(bar);
}

std::string signature(int nrefs) {
  return str("nrefs:", nrefs, "|case:mixed|eff:no|tok:13a|smooth:exp|version:", kSacreBleuVersion);
}

void add_confidence_json(nlohmann::ordered_json& j, const std::optional<ConfidenceEstimate>& c, int width) {
  if (!c || c->mean <= 0) return;  // sacreBLEU shows an estimate only when its mean is above 0
  j["confidence_mean"] = std::stod(fixed_decimals(c->mean, width));
  j["confidence_var"] = std::stod(fixed_decimals(c->ci, width));
  j["confidence"] = c->text(width);
}

namespace {

// The part of sacreBLEU's line after the score: "60.1/32.3/19.5/12.4 (BP = ... ref_len = 1271)".
std::string verbose_part(const BleuScore& s) {
  std::string out;
  for (int n = 0; n < kMaxOrder; ++n) out += (n ? "/" : "") + fixed_decimals(s.precisions[n], 1);
  return out + " (BP = " + fixed_decimals(s.bp, 3) + " ratio = " + fixed_decimals(s.ratio, 3) +
         " hyp_len = " + std::to_string(s.hyp_len) + " ref_len = " + std::to_string(s.ref_len) + ")";
}

}  // namespace

std::string BleuScore::format(int width, const std::string& sig) const {
  std::string value = fixed_decimals(score, width);
  if (confidence && confidence->mean > 0) value += " (" + confidence->text(width) + ")";
  return (sig.empty() ? std::string("BLEU") : "BLEU|" + sig) + " = " + value + " " + verbose_part(*this);
}

std::string BleuScore::signature() const {
  const std::string sig = bleu::signature(nrefs);
  return confidence ? with_test_fields(sig, confidence->signature_fields()) : sig;
}

std::string BleuScore::to_json(int width) const {
  const std::string sig = signature();
  nlohmann::ordered_json j;
  j["name"] = "BLEU";
  j["score"] = std::stod(fixed_decimals(score, width));
  j["signature"] = sig;
  add_confidence_json(j, confidence, width);
  j["verbose_score"] = verbose_part(*this);
  for (const auto& [key, value] : signature_fields(sig)) j[key] = value;
  j["score_unrounded"] = score;
  j["precisions"] = precisions;
  j["counts"] = counts;
  j["totals"] = totals;
  j["bp"] = bp;
  j["ratio"] = ratio;
  j["hyp_len"] = hyp_len;
  j["ref_len"] = ref_len;
  return j.dump(1);
}

std::vector<std::string> read_lines(std::istream& in, const std::string& source) {
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) LUONG_FAIL("bleu: cannot read ", source);
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    if (const int64_t bad = utf8_invalid_offset(line); bad >= 0)
      LUONG_FAIL("bleu: ", source, " line ", lines.size() + 1, ": invalid UTF-8 at byte ", bad, " of the line");
    lines.push_back(rstrip_whitespace(line));
    start = end + 1;
  }
  return lines;
}

std::vector<std::string> read_lines_from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) LUONG_FAIL("bleu: cannot open reference file ", path);
  return read_lines(in, path);
}

}  // namespace luong::bleu
