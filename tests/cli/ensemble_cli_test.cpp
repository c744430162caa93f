// `luong eval` / `luong translate` with several checkpoints (an ensemble): the JSON names the members, the
// perplexity is the mixture's (never above the members' geometric mean), one checkpoint given twice
// translates as it does alone, and members that do not read the same tokens are refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "framework/io/checkpoint_dir.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

class EnsembleCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = generated_corpus("ensemble_cli_data", "--train 300 --valid 20 --test 12");
    a_ = train("ensemble_a", "--set seed=1");
    b_ = train("ensemble_b", "--set seed=2");
    small_vocab_ = train("ensemble_small_vocab", "--set data.tgt_vocab_size=12");
    lowercase_ = train("ensemble_lowercase", "--set data.lowercase=true");
  }
  static std::string train(const std::string& name, const std::string& extra) {
    const std::string dir = fresh_dir(name);
    const RunResult r = run_luong(tiny_train_command(dir, data_) +
                                  " --quiet --set train.max_epochs=0 --set train.max_steps=40 " + extra);
    EXPECT_EQ(r.status, 0) << r.output;
    return checkpoint_path(dir, 40);
  }
  static nlohmann::json eval(const std::string& checkpoints) {
    const RunResult r = run_luong_shell(std::string(LUONG_BINARY) + " eval --checkpoint " + checkpoints + " --src " +
                                        data_ + "/test.src --ref " + data_ + "/test.tgt --json 2>/dev/null");
    EXPECT_EQ(r.status, 0) << r.output;
    return nlohmann::json::parse(r.output);
  }
  static RunResult translate(const std::string& checkpoints) {
    return run_luong_shell(std::string(LUONG_BINARY) + " translate --checkpoint " + checkpoints + " < " + data_ +
                           "/test.src 2>&1");
  }
  static std::string data_, a_, b_, small_vocab_, lowercase_;
};
std::string EnsembleCli::data_, EnsembleCli::a_, EnsembleCli::b_, EnsembleCli::small_vocab_, EnsembleCli::lowercase_;

TEST_F(EnsembleCli, EvalNamesTheMembersAndScoresTheMixture) {
  const nlohmann::json alone_a = eval(a_), alone_b = eval(b_), both = eval(a_ + " " + b_);
  EXPECT_FALSE(alone_a.contains("ensemble"));
  EXPECT_EQ(both.at("checkpoint"), a_);
  EXPECT_EQ(both.at("ensemble"), nlohmann::json::array({a_, b_}));
  EXPECT_EQ(both.at("tokens"), alone_a.at("tokens"));
  // Per token -log((p_a + p_b) / 2) <= (-log p_a - log p_b) / 2: the summed loss, hence log ppl, too.
  const double pa = alone_a.at("ppl"), pb = alone_b.at("ppl"), p = both.at("ppl");
  EXPECT_LE(std::log(p), (std::log(pa) + std::log(pb)) / 2 + 1e-9);
  EXPECT_NE(p, pa);
  EXPECT_NE(p, pb);
  // The option repeated is the same ensemble.
  EXPECT_EQ(eval(a_ + " --checkpoint " + b_).at("ppl"), p);
}

TEST_F(EnsembleCli, OneCheckpointTwiceTranslatesAsItDoesAlone) {
  const RunResult once = translate(a_), twice = translate(a_ + " " + a_);
  ASSERT_EQ(once.status, 0) << once.output;
  ASSERT_EQ(twice.status, 0) << twice.output;
  EXPECT_EQ(once.output, twice.output);
}

TEST_F(EnsembleCli, MembersThatReadOtherTokensAreRefusedByName) {
  const RunResult vocab = translate(a_ + " " + small_vocab_);
  EXPECT_EQ(vocab.status, 1) << vocab.output;
  EXPECT_NE(vocab.output.find("ensemble: checkpoint " + small_vocab_ + " has another target vocabulary than " + a_),
            std::string::npos)
      << vocab.output;
  EXPECT_NE(vocab.output.find("12 tokens there"), std::string::npos) << vocab.output;
  const RunResult lower = translate(a_ + " " + lowercase_);
  EXPECT_EQ(lower.status, 1) << lower.output;
  EXPECT_NE(lower.output.find("ensemble: checkpoint " + lowercase_ + " has data.lowercase: true"), std::string::npos)
      << lower.output;
}

}  // namespace
}  // namespace luong::testing
