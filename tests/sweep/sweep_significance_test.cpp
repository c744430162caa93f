// The report's significance column: each evaluated trial's translations tested against the best trial's, through
// the test `luong sweep` passes in (here a stand-in that records its calls), and the trials it cannot test named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "framework/sweep/sweep_report.h"
#include "framework/sweep/sweep_runner.h"
#include "tests/support/run_luong.h"

namespace luong::sweep {
namespace {

struct Call {
  std::string metric, baseline, system, reference;
};

TrialResult evaluated(const std::string& name, double bleu, const std::string& ref) {
  TrialResult r;
  r.name = name, r.status = TrialStatus::ok, r.bleu = bleu, r.chrf = bleu + 10, r.eval_ref = ref;
  return r;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(SweepSignificance, EachTrialIsTestedAgainstTheBestOnTheSweepsMetric) {
  const std::string out = testing::fresh_dir("sweep_significance");
  const std::vector<TrialResult> results = {evaluated("low", 10, "ref.txt"), evaluated("top", 30, "ref.txt"),
                                            evaluated("mid", 20, "ref.txt"), evaluated("old", 15, ""),
                                            evaluated("other_ref", 25, "other.txt")};
  for (const char* name : {"low", "top", "mid", "other_ref"}) {
    std::filesystem::create_directories(trial_dir(out, name));
    std::ofstream(trial_dir(out, name) + "/" + kEvalTranslationsFile) << name << "\n";
  }
  std::filesystem::create_directories(trial_dir(out, "old"));  // evaluated before translations were kept
  SweepSpec spec;
  spec.file = "spec.yaml", spec.metric = "bleu", spec.mode = "max";
  std::vector<Call> calls;
  const PairedTestFn test = [&](const std::string& m, const std::string& a, const std::string& b,
                                const std::string& r) {
    calls.push_back({m, a, b, r});
    return b.find("/mid/") != std::string::npos ? 0.25 : 0.001;
  };
  std::vector<std::string> said;
  const SweepReport rep = write_sweep_report(spec, results, out, SweepStage::finished, test,
                                             [&](const std::string& s) { said.push_back(s); });
  ASSERT_EQ(calls.size(), 2u);  // mid and low; not old (no translations) or other_ref (another reference)
  for (const Call& c : calls) {
    EXPECT_EQ(c.metric, "bleu");
    EXPECT_EQ(c.baseline, trial_dir(out, "top") + "/" + kEvalTranslationsFile);
    EXPECT_EQ(c.reference, "ref.txt");
  }
  EXPECT_EQ(rep.ranked[0].name, "top");
  EXPECT_FALSE(rep.ranked[0].p_vs_best);
  EXPECT_EQ(rep.ranked[2].name, "mid");
  EXPECT_EQ(*rep.ranked[2].p_vs_best, 0.25);
  const std::string csv = read(out + "/results.csv");
  EXPECT_NE(csv.find("rank,trial,valid_ppl,bleu,chrf,p_vs_best,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("1,top,,30,40,best,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("3,mid,,20,30,0.25,"), std::string::npos) << csv;
  EXPECT_NE(read(out + "/results.md").find("p_vs_best: paired bootstrap resampling"), std::string::npos);
  ASSERT_EQ(said.size(), 2u);
  EXPECT_NE(said[0].find("no significance test of other_ref against top: it was evaluated on another reference"),
            std::string::npos);
  EXPECT_NE(said[1].find("no significance test of old against top: its translations were not kept"), std::string::npos);

  // Ranked by chrF: trials scored with chrF2++ are tested on chrF2++ ("chrf++"), one scored with chrF2 is not tested.
  std::vector<TrialResult> plusplus = results;
  for (TrialResult& r : plusplus) r.eval_chrf_word_order = r.name == "low" ? 0 : 2;
  spec.metric = "chrf";
  calls.clear(), said.clear();
  write_sweep_report(spec, plusplus, out, SweepStage::finished, test, [&](const std::string& s) { said.push_back(s); });
  ASSERT_EQ(calls.size(), 1u);  // mid; low has another word order
  EXPECT_EQ(calls[0].metric, "chrf++");
  ASSERT_EQ(said.size(), 3u);  // other_ref, old, low in rank order
  EXPECT_NE(said[0].find("no significance test of other_ref"), std::string::npos);
  EXPECT_NE(said[2].find("no significance test of low against top: its chrF has another word order"),
            std::string::npos);

  // Ranked by a metric that is no corpus score: no test, no column.
  spec.metric = "valid_ppl", spec.mode = "min";
  calls.clear();
  write_sweep_report(spec, results, out, SweepStage::finished, test);
  EXPECT_TRUE(calls.empty());
  EXPECT_EQ(read(out + "/results.csv").find("p_vs_best"), std::string::npos);
}

}  // namespace
}  // namespace luong::sweep
