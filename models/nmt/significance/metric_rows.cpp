// Compiled with -ffp-contract=off (CMakeLists.txt): the float32 formulas must round each operation as numpy
// does, never fusing a multiply and an add.
#include "models/nmt/significance/metric_rows.h"

#include <cmath>

#include "framework/core/error.h"
#include "models/nmt/bleu.h"
#include "models/nmt/chrf.h"
#include "models/nmt/reference_sets.h"

namespace luong::significance {
namespace {

constexpr size_t kBleuColumns = 2 + 2 * bleu::kMaxOrder;

size_t chrf_orders(int word_order) { return static_cast<size_t>(chrf::kCharOrder + word_order); }

bleu::BleuStats bleu_stats(std::span<const int64_t> s) {
  bleu::BleuStats st;
  st.hyp_len = s[0], st.ref_len = s[1];
  for (int n = 0; n < bleu::kMaxOrder; ++n) st.correct[n] = s[2 + n], st.total[n] = s[2 + bleu::kMaxOrder + n];
  return st;
}

chrf::ChrfStats chrf_stats(std::span<const int64_t> s, int word_order) {
  chrf::ChrfStats st;
  for (size_t n = 0; n < chrf_orders(word_order); ++n)
    st.hyp[n] = s[3 * n], st.ref[n] = s[3 * n + 1], st.match[n] = s[3 * n + 2];
  return st;
}

// sacreBLEU's BLEU.compute_bleu on a float32 array: the lengths as Python ints, each precision
// `100. * correct / total` (or `100. / (smooth * total)`) in float32, the rest in double.
double bleu_resampled(std::span<const float> s) {
  const auto sys_len = static_cast<int64_t>(s[0]), ref_len = static_cast<int64_t>(s[1]);
  double bp = 1.0;
  if (sys_len < ref_len)
    bp = sys_len > 0 ? std::exp(1.0 - static_cast<double>(ref_len) / static_cast<double>(sys_len)) : 0.0;
  bool any_match = false;
  for (int n = 0; n < bleu::kMaxOrder; ++n) any_match = any_match || s[2 + n] != 0.0f;
  if (!any_match) return 0.0;
  float precisions[bleu::kMaxOrder] = {};
  double smooth = 1.0;
  for (int n = 0; n < bleu::kMaxOrder; ++n) {
    const float correct = s[2 + n], total = s[2 + bleu::kMaxOrder + n];
    if (total == 0.0f) break;
    if (correct == 0.0f) {
      smooth *= 2;
      const float denominator = static_cast<float>(smooth) * total;
      precisions[n] = 100.0f / denominator;
    } else {
      const float scaled = 100.0f * correct;
      precisions[n] = scaled / total;
    }
  }
  double log_sum = 0.0;  // sacreBLEU's my_log: log(0) is -9999999999
  for (float p : precisions) log_sum += p == 0.0f ? -9999999999.0 : std::log(static_cast<double>(p));
  return bp * std::exp(log_sum / bleu::kMaxOrder);
}

// sacreBLEU's CHRF._compute_f_score on a float32 array: every quotient, average and the F-beta in float32.
double chrf_resampled(std::span<const float> s, int word_order) {
  float precision = 0.0f, recall = 0.0f;
  int orders = 0;
  for (size_t n = 0; n < chrf_orders(word_order); ++n) {
    const float hyp = s[3 * n], ref = s[3 * n + 1], match = s[3 * n + 2];
    if (hyp > 0.0f && ref > 0.0f) {
      precision += match / hyp;
      recall += match / ref;
      ++orders;
    }
  }
  if (orders == 0) return 0.0;
  precision /= static_cast<float>(orders);
  recall /= static_cast<float>(orders);
  if (precision + recall == 0.0f) return 0.0;
  constexpr float factor = chrf::kBeta * chrf::kBeta;
  float score = (1.0f + factor) * precision;
  score *= recall;
  const float scaled_precision = factor * precision;
  score /= scaled_precision + recall;
  return 100.0f * score;
}

}  // namespace

std::string MetricRows::name() const {
  return metric == Metric::kBleu ? "BLEU" : "chrF" + std::to_string(chrf::kBeta) + std::string(word_order, '+');
}

std::string MetricRows::signature() const {
  return metric == Metric::kBleu ? bleu::signature(nrefs) : chrf::signature(word_order, nrefs);
}

MetricRows bleu_rows(const std::vector<std::string>& hypotheses,
                     const std::vector<std::vector<std::string>>& reference_sets) {
  ReferenceSets refs(reference_sets, hypotheses.size(), "bleu");
  MetricRows m;
  m.metric = Metric::kBleu;
  m.nrefs = refs.count();
  m.columns = kBleuColumns;
  m.rows.reserve(hypotheses.size() * m.columns);
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    const bleu::BleuStats st = bleu::sentence_stats(hypotheses[i], refs.of(i));
    m.rows.push_back(st.hyp_len);
    m.rows.push_back(st.ref_len);
    m.rows.insert(m.rows.end(), st.correct.begin(), st.correct.end());
    m.rows.insert(m.rows.end(), st.total.begin(), st.total.end());
  }
  return m;
}

MetricRows chrf_rows(const std::vector<std::string>& hypotheses,
                     const std::vector<std::vector<std::string>>& reference_sets, int word_order) {
  ReferenceSets refs(reference_sets, hypotheses.size(), "chrF");
  MetricRows m;
  m.metric = Metric::kChrf;
  m.word_order = word_order;
  m.nrefs = refs.count();
  m.columns = 3 * chrf_orders(word_order);
  m.rows.reserve(hypotheses.size() * m.columns);
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    const chrf::ChrfStats st = chrf::sentence_stats(hypotheses[i], refs.of(i), word_order);
    for (size_t n = 0; n < chrf_orders(word_order); ++n) {
      m.rows.push_back(st.hyp[n]);
      m.rows.push_back(st.ref[n]);
      m.rows.push_back(st.match[n]);
    }
  }
  return m;
}

double score_exact(const MetricRows& m, std::span<const int64_t> sums) {
  LUONG_CHECK(sums.size() == m.columns, "score_exact: ", sums.size(), " sums for ", m.columns, " columns");
  return m.metric == Metric::kBleu ? bleu::score_from_stats(bleu_stats(sums)).score
                                   : chrf::score_from_stats(chrf_stats(sums, m.word_order), m.word_order).score;
}

std::vector<int64_t> column_sums(const MetricRows& m) {
  std::vector<int64_t> sums(m.columns, 0);
  for (size_t i = 0; i < m.sentences(); ++i)
    for (size_t c = 0; c < m.columns; ++c) sums[c] += m.rows[i * m.columns + c];
  return sums;
}

double corpus_score(const MetricRows& m) { return score_exact(m, column_sums(m)); }

double score_resampled(const MetricRows& m, std::span<const float> sums) {
  LUONG_CHECK(sums.size() == m.columns, "score_resampled: ", sums.size(), " sums for ", m.columns, " columns");
  return m.metric == Metric::kBleu ? bleu_resampled(sums) : chrf_resampled(sums, m.word_order);
}

}  // namespace luong::significance
