// The significance tests against sacreBLEU 2.6.0 (significance.json, made by make_expected.py): numpy's generator
// draw for draw, then confidence intervals and paired tests bit for bit, for BLEU, chrF and chrF++, with one and
// two references.
#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "models/nmt/bleu.h"
#include "models/nmt/significance/metric_rows.h"
#include "models/nmt/significance/numpy_generator.h"
#include "models/nmt/significance/numpy_sums.h"
#include "models/nmt/significance/paired_tests.h"
#include "tests/bleu/bleu_fixture.h"

namespace luong {
namespace {

using significance::Metric;
using significance::MetricRows;
using significance::NumpyGenerator;
using testing::bleu_data;

const nlohmann::json& fixture() { return testing::significance_fixture(); }

std::vector<std::string> lines(const std::string& name) { return bleu::read_lines_from_file(bleu_data(name)); }

std::vector<std::vector<std::string>> references(const nlohmann::json& names) {
  std::vector<std::vector<std::string>> refs;
  for (const auto& n : names) refs.push_back(lines(n.get<std::string>()));
  return refs;
}

MetricRows rows(const std::string& metric, const std::string& system,
                const std::vector<std::vector<std::string>>& refs) {
  if (metric == "bleu") return significance::bleu_rows(lines(system), refs);
  return significance::chrf_rows(lines(system), refs, metric == "chrf++" ? 2 : 0);
}

TEST(NumpyGenerator, DrawsWhatNumpysDefaultRngDraws) {
  for (const auto& [seed_text, draws] : fixture()["numpy"].items()) {
    const uint64_t seed = std::stoull(seed_text);
    NumpyGenerator raw(seed);
    for (const auto& v : draws["raw_uint64"]) EXPECT_EQ(raw.next_uint64(), std::stoull(v.get<std::string>())) << seed;
    NumpyGenerator choice(seed);
    for (const auto& v : draws["choice_37"]) EXPECT_EQ(choice.below(37), v.get<int64_t>()) << seed;
    NumpyGenerator wide(seed);  // a bound near 2^32: Lemire's rejection loop runs
    for (const auto& v : draws["choice_3e9"]) EXPECT_EQ(wide.below(3'000'000'000), v.get<int64_t>()) << seed;
    NumpyGenerator coins(seed);
    coins.start_array();
    for (const auto& v : draws["bools_3x37"]) EXPECT_EQ(coins.coin(), v.get<int>() != 0) << seed;
  }
}

TEST(NumpyGenerator, BelowOneIsZeroAndDrawsNothing) {
  NumpyGenerator a(7), b(7);
  EXPECT_EQ(a.below(1), 0);
  EXPECT_EQ(a.next_uint64(), b.next_uint64());
  EXPECT_THROW(a.below(0), Error);
}

TEST(NumpySums, PairwiseFloatSumDiffersFromASequentialOne) {
  // 1 + 2^-24 added 200 times: a sequential float sum never moves from 1; numpy's pairwise blocks add the small
  // values among themselves first. The sum must be numpy's for the float32 means of chrF's resamples.
  std::vector<float> v(201, 5.9604645e-08f);
  v[0] = 1.0f;
  float sequential = 0;
  for (float x : v) sequential += x;
  EXPECT_EQ(sequential, 1.0f);
  EXPECT_GT(significance::numpy_sum(v.data(), v.size()), 1.0f);
  EXPECT_EQ(significance::numpy_sum(v.data(), 5), 1.0f);  // under 8 values numpy adds them in order
}

void expect_result(const significance::SystemResult& got, const nlohmann::json& want, const std::string& where) {
  EXPECT_EQ(got.score, want["score"].get<double>()) << where;
  if (want["p_value"].is_null()) {
    EXPECT_FALSE(got.p_value) << where;
  } else {
    ASSERT_TRUE(got.p_value) << where;
    EXPECT_EQ(*got.p_value, want["p_value"].get<double>()) << where;
  }
  if (want["mean"].is_null()) {
    EXPECT_FALSE(got.estimate) << where;
  } else {
    ASSERT_TRUE(got.estimate) << where;
    EXPECT_EQ(got.estimate->mean, want["mean"].get<double>()) << where;
    EXPECT_EQ(got.estimate->ci, want["ci"].get<double>()) << where;
  }
}

TEST(Significance, ConfidenceIntervalsEqualSacreBleus) {
  for (const auto& [name, c] : fixture()["cases"].items()) {
    const auto refs = references(c["refs"]);
    for (const auto& [metric, want] : c["confidence"].items()) {
      const MetricRows m = rows(metric, "hyp.txt", refs);
      EXPECT_EQ(significance::corpus_score(m), want["score"].get<double>()) << name << " " << metric;
      const significance::Estimate e = significance::bootstrap_confidence(m, 1000);
      EXPECT_EQ(e.mean, want["mean"].get<double>()) << name << " " << metric;
      EXPECT_EQ(e.ci, want["ci"].get<double>()) << name << " " << metric;
    }
  }
}

TEST(Significance, PairedTestsEqualSacreBleus) {
  const auto& systems = fixture()["systems"];
  for (const auto& [name, c] : fixture()["cases"].items()) {
    const auto refs = references(c["refs"]);
    for (const char* test : {"paired_bs", "paired_ar"}) {
      for (const auto& [metric, want] : c[test].items()) {
        std::vector<MetricRows> all;
        for (const auto& s : systems) all.push_back(rows(metric, s.get<std::string>(), refs));
        const bool bootstrap = std::string(test) == "paired_bs";
        const auto got =
            bootstrap ? significance::paired_bootstrap(all, 1000) : significance::paired_randomization(all, 10000);
        ASSERT_EQ(got.size(), want.size());
        for (size_t s = 0; s < got.size(); ++s)
          expect_result(got[s], want[s], name + " " + test + " " + metric + " " + std::to_string(s));
      }
    }
  }
}

TEST(Significance, ASystemAgainstItselfIsNeverSignificant) {
  const auto refs = references(nlohmann::json::array({"ref.txt"}));
  const std::vector<MetricRows> same{rows("bleu", "hyp.txt", refs), rows("bleu", "hyp.txt", refs)};
  for (const auto& r : {significance::paired_bootstrap(same, 200), significance::paired_randomization(same, 200)})
    EXPECT_EQ(*r[1].p_value, 1.0);  // sacreBLEU: 1 / 201 (its `>` counts none of the ties)
}

TEST(Significance, TheSeedChoosesTheResamples) {
  const auto refs = references(nlohmann::json::array({"ref.txt"}));
  const MetricRows m = rows("bleu", "hyp.txt", refs);
  const auto a = significance::bootstrap_confidence(m, 300, 1), b = significance::bootstrap_confidence(m, 300, 1),
             c = significance::bootstrap_confidence(m, 300, 2);
  EXPECT_EQ(a.mean, b.mean);
  EXPECT_NE(a.mean, c.mean);
}

TEST(Significance, MismatchedSystemsAreRefused) {
  const auto refs = references(nlohmann::json::array({"ref.txt"}));
  const MetricRows bleu = rows("bleu", "hyp.txt", refs), chrf = rows("chrf", "hyp.txt", refs);
  EXPECT_THROW(significance::paired_bootstrap({bleu}, 10), Error);
  EXPECT_THROW(significance::paired_bootstrap({bleu, chrf}, 10), Error);
  EXPECT_THROW(significance::paired_randomization({bleu, bleu}, 0), Error);
}

}  // namespace
}  // namespace luong
