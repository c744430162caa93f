// Corpus BLEU exactly as sacreBLEU computes it by default (version 2.6.0 checked): one reference or several
// (an n-gram's matches clipped by its largest count in any reference; the reference length the one closest to
// the hypothesis length, the shorter on a tie), 13a tokenisation, case-sensitive, n-grams up to 4, 'exp' smoothing (an
// order with no match gets precision 100 / (2^k · total), k counting such orders), brevity penalty exp(1 - ref_len /
// hyp_len).
#pragma once
#include <array>
#include <cstdint>
#include <istream>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace luong::bleu {

inline constexpr int kMaxOrder = 4;
// The sacreBLEU release whose scores, formatting and signature this reproduces.
inline constexpr const char* kSacreBleuVersion = "2.6.0";

// Sufficient statistics; they add up over sentences.
struct BleuStats {
  int64_t hyp_len = 0;
  int64_t ref_len = 0;
  std::array<int64_t, kMaxOrder> correct{};  // clipped n-gram matches, n = 1..4
  std::array<int64_t, kMaxOrder> total{};    // hypothesis n-grams, n = 1..4
  BleuStats& operator+=(const BleuStats& o);
};

// A bootstrap estimate shown with a corpus score (sacreBLEU's --confidence): "(μ = 62.5 ± 9.5)" after the score
// when the mean is above 0, and "bs:N|seed:S" in the signature.
struct ConfidenceEstimate {
  int resamples = 0;
  uint64_t seed = 0;
  double mean = 0, ci = 0;
  std::string signature_fields() const;  // "bs:1000|seed:12345"
  std::string text(int width) const;     // "μ = 62.5 ± 9.5"
};

struct BleuScore {
  double score = 0;                         // 0..100
  std::array<double, kMaxOrder> precisions{};  // percent, smoothed
  double bp = 0;                            // brevity penalty
  double ratio = 0;                         // hyp_len / ref_len (0 when ref_len is 0)
  int64_t hyp_len = 0;
  int64_t ref_len = 0;
  std::array<int64_t, kMaxOrder> counts{};
  std::array<int64_t, kMaxOrder> totals{};
  int nrefs = 1;  // references per segment (the signature's nrefs)
  std::optional<ConfidenceEstimate> confidence;

  // The score's full signature: signature(nrefs), with the estimate's bs and seed when there is one.
  std::string signature() const;
  // sacreBLEU's text line: "BLEU = 25.12 60.1/32.3/19.5/12.4 (BP = 0.971 ratio = 0.971 hyp_len = 1234
  // ref_len = 1271)"; with a signature "BLEU|<signature> = ...". `width` is the score's decimals.
  std::string format(int width = 2, const std::string& signature = "") const;
  // sacreBLEU's JSON object (same keys and order, score rounded to `width`), plus the full-precision
  // fields score_unrounded, precisions, counts, totals, bp, ratio, hyp_len, ref_len.
  std::string to_json(int width = 2) const;
};

// "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0" (nrefs: references per segment).
std::string signature(int nrefs = 1);
// `sig` with a statistical test's fields after its first (nrefs) field, where sacreBLEU puts them:
// with_test_fields("nrefs:1|case:mixed|...", "bs:1000|seed:12345") is "nrefs:1|bs:1000|seed:12345|case:mixed|...".
std::string with_test_fields(const std::string& sig, const std::string& fields);
// Adds sacreBLEU's confidence_mean, confidence_var and confidence keys of `c` to a score's JSON object (none
// without an estimate, or when its mean is 0, as sacreBLEU shows none then).
void add_confidence_json(nlohmann::ordered_json& j, const std::optional<ConfidenceEstimate>& c, int width);
// A sacreBLEU signature's fields in order ("nrefs:1|case:mixed" gives {"nrefs", "1"}, {"case", "mixed"}): the
// keys its JSON output repeats after "signature" (for BLEU and chrF alike).
std::vector<std::pair<std::string, std::string>> signature_fields(const std::string& signature);
// `v` with `decimals` digits after the point, as sacreBLEU prints scores (printf's rounding).
std::string fixed_decimals(double v, int decimals);

// Statistics of one raw (untokenised) hypothesis against one raw reference; both are right-stripped
// and 13a-tokenised as sacreBLEU does.
BleuStats sentence_stats(const std::string& hypothesis, const std::string& reference);
// The same against several references (at least one).
BleuStats sentence_stats(const std::string& hypothesis, const std::vector<std::string>& references);
BleuScore score_from_stats(const BleuStats& stats);
// Corpus BLEU; the line counts must match (the error names both).
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references);
// Against reference sets (each one reference per hypothesis, as a file of them holds): line counts must match.
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& reference_sets);

// Reads lines as sacreBLEU does (split at '\n' only, each right-stripped of whitespace); invalid UTF-8
// is an error naming `source` and the line number.
std::vector<std::string> read_lines(std::istream& in, const std::string& source);
std::vector<std::string> read_lines_from_file(const std::string& path);

}  // namespace luong::bleu
