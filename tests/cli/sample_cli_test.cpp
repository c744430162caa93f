// `luong translate --sample`: the same lines give the same samples whatever the batch size, another --seed gives
// others, --n-best N prints N samples a sentence (best score first), --sample-topk 1 is greedy decoding, and the
// options that do not go with it are refused naming the option.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "framework/io/checkpoint_dir.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

class SampleCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = generated_corpus("sample_cli_data", "--train 300 --valid 20 --test 40");
    const std::string dir = fresh_dir("sample_cli_run");
    const RunResult r =
        run_luong(tiny_train_command(dir, data_) + " --quiet --set train.max_epochs=0 --set train.max_steps=30");
    ASSERT_EQ(r.status, 0) << r.output;
    checkpoint_ = checkpoint_path(dir, 30);
  }
  // `luong translate` of the test sources with `options`; stderr apart.
  static RunResult translate(const std::string& options) {
    return run_luong_shell(std::string(LUONG_BINARY) + " translate --checkpoint " + checkpoint_ + " " + options +
                           " < " + data_ + "/test.src 2>" + data_ + "/stderr.txt");
  }
  static std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  static std::string data_, checkpoint_;
};
std::string SampleCli::data_, SampleCli::checkpoint_;

TEST_F(SampleCli, TheSameLinesGiveTheSameSamplesWhateverTheBatchAndAnotherSeedOthers) {
  const RunResult a = translate("--sample --seed 4 --batch-size 32");
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_EQ(lines(a.output).size(), 40u);
  const RunResult b = translate("--sample --seed 4 --batch-size 1");
  EXPECT_EQ(b.output, a.output);
  const RunResult c = translate("--sample --seed 5 --batch-size 32");
  EXPECT_NE(c.output, a.output);
  // Beam search (the checkpoint's beam) is another path: sampling at temperature 1 differs from it somewhere.
  EXPECT_NE(translate("").output, a.output);
  // The top token alone is greedy decoding.
  EXPECT_EQ(translate("--sample --sample-topk 1").output, translate("--beam 1").output);
}

TEST_F(SampleCli, NBestPrintsThatManySamplesASentenceBestFirst) {
  const RunResult r = translate("--sample --n-best 3 --temperature 1.5");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto out = lines(r.output);
  ASSERT_EQ(out.size(), 120u);
  for (size_t i = 0; i < out.size(); ++i) {
    // "index ||| translation ||| score"
    const size_t first = out[i].find(" ||| "), last = out[i].rfind(" ||| ");
    ASSERT_NE(first, last) << out[i];
    EXPECT_EQ(std::stoul(out[i].substr(0, first)), i / 3) << out[i];
    if (i % 3 > 0) {
      const double previous = std::stod(out[i - 1].substr(out[i - 1].rfind(" ||| ") + 5));
      EXPECT_GE(previous, std::stod(out[i].substr(last + 5))) << out[i - 1] << "\n" << out[i];
    }
  }
}

// --mbr prints one line a sentence: one of the candidates the same options print as an n-best list.
TEST_F(SampleCli, MbrPrintsOneOfEachSentencesCandidates) {
  const RunResult candidates = translate("--sample --n-best 6 --seed 9");
  const RunResult chosen = translate("--sample --n-best 6 --seed 9 --mbr");
  ASSERT_EQ(chosen.status, 0) << chosen.output;
  const auto out = lines(chosen.output), list = lines(candidates.output);
  ASSERT_EQ(out.size(), 40u);
  ASSERT_EQ(list.size(), 240u);
  // The text of candidate k of sentence i in the n-best list ("i ||| text ||| score" lines, 6 a sentence).
  const auto candidate = [&](size_t i, size_t k) {
    const std::string& line = list[6 * i + k];
    const size_t first = line.find(" ||| "), last = line.rfind(" ||| ");
    return line.substr(first + 5, last - first - 5);
  };
  const auto is_candidate = [&](size_t i, const std::string& text) {
    for (size_t k = 0; k < 6; ++k)
      if (candidate(i, k) == text) return true;
    return false;
  };
  int not_the_best_scored = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_TRUE(is_candidate(i, out[i])) << "line " << i << ": " << out[i];
    not_the_best_scored += candidate(i, 0) != out[i];
  }
  // Consensus is not the model's score: on 40 sentences of an undertrained model the choices differ somewhere.
  EXPECT_GT(not_the_best_scored, 0);
  EXPECT_EQ(translate("--beam 4 --n-best 4 --mbr").status, 0);  // the beam's hypotheses as candidates
  // By sentence BLEU: again one of the candidates each time, and not always the choice chrF made.
  const RunResult by_bleu = translate("--sample --n-best 6 --seed 9 --mbr --mbr-utility bleu");
  ASSERT_EQ(by_bleu.status, 0) << by_bleu.output;
  const auto bleu_out = lines(by_bleu.output);
  ASSERT_EQ(bleu_out.size(), 40u);
  int differ = 0;
  for (size_t i = 0; i < bleu_out.size(); ++i) {
    EXPECT_TRUE(is_candidate(i, bleu_out[i])) << "line " << i << ": " << bleu_out[i];
    differ += bleu_out[i] != out[i];
  }
  EXPECT_GT(differ, 0);
}

TEST_F(SampleCli, OptionsThatDoNotGoWithSamplingAreRefused) {
  const auto refused = [](const std::string& options, const std::string& message) {
    const RunResult r = translate(options);
    EXPECT_NE(r.status, 0) << options;
    std::ifstream in(data_ + "/stderr.txt");
    std::stringstream err;
    err << in.rdbuf();
    EXPECT_NE(err.str().find(message), std::string::npos) << options << ": " << err.str();
  };
  refused("--sample --beam 4", "luong: error: --beam does not apply with --sample");
  refused("--seed 3", "--seed requires --sample");
  refused("--temperature 0.5", "--temperature requires --sample");
  refused("--sample --temperature 0", "--temperature must be a number greater than 0 and at most 100, got 0");
  refused("--sample --sample-topk -2", "--sample-topk must be >= 0");
  refused("--sample --mbr", "--mbr chooses among each sentence's --n-best candidates: pass --n-best 2 or more");
  refused("--sample --n-best 4 --mbr --mbr-utility ter", "--mbr-utility must be chrf or bleu, got 'ter'");
}

}  // namespace
}  // namespace luong::testing
