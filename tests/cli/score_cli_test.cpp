// `luong score`: a line per input line in the input's order, --normalize and --json agreeing with each other, the
// scores independent of --batch-size and adding up to `luong eval`'s perplexity, an ensemble of one checkpoint
// twice scoring as it does alone, a blank source printed as nan with a warning (a blank target is scored), and
// the input errors named; an n-best list of `luong translate` gets back the scores its beam search gave each
// hypothesis (without length normalisation both are the sum of the tokens' log-probabilities).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

class ScoreCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = generated_corpus("score_cli_data", "--train 300 --valid 20 --test 12");
    const std::string dir = fresh_dir("score_cli_run");
    const RunResult r =
        run_luong(tiny_train_command(dir, data_) + " --quiet --set train.max_epochs=0 --set train.max_steps=40");
    EXPECT_EQ(r.status, 0) << r.output;
    checkpoint_ = checkpoint_path(dir, 40);
  }
  static RunResult score(const std::string& src, const std::string& tgt, const std::string& extra = "",
                         const std::string& checkpoints = "") {
    return run_luong_shell(std::string(LUONG_BINARY) + " score --checkpoint " +
                           (checkpoints.empty() ? checkpoint_ : checkpoints) + " --src " + src +
                           (tgt.empty() ? "" : " --tgt " + tgt) + " " + extra + " 2>" + data_ + "/stderr.txt");
  }
  static std::string last_stderr() {
    std::ifstream in(data_ + "/stderr.txt");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static std::vector<nlohmann::json> json_lines(const std::string& output) {
    std::vector<nlohmann::json> out;
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  static std::vector<std::string> lines(const std::string& output) {
    std::vector<std::string> out;
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  static std::string write(const std::string& name, const std::string& text) {
    const std::string path = data_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  static std::string data_, checkpoint_;
};
std::string ScoreCli::data_, ScoreCli::checkpoint_;

TEST_F(ScoreCli, ALinePerPairThatAddsUpToEvalsPerplexityWhateverTheBatch) {
  const std::string src = data_ + "/test.src", tgt = data_ + "/test.tgt";
  const RunResult plain = score(src, tgt), normalized = score(src, tgt, "--normalize");
  const RunResult js = score(src, tgt, "--json"), one = score(src, tgt, "--json --batch-size 1");
  for (const RunResult* r : {&plain, &normalized, &js, &one}) ASSERT_EQ(r->status, 0) << r->output << last_stderr();
  const std::vector<nlohmann::json> rows = json_lines(js.output), rows_one = json_lines(one.output);
  const std::vector<std::string> sums = lines(plain.output), means = lines(normalized.output);
  ASSERT_EQ(rows.size(), 12u);
  ASSERT_EQ(sums.size(), 12u);
  ASSERT_EQ(means.size(), 12u);
  double log_prob = 0;
  int64_t tokens = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const nlohmann::json& r = rows[i];
    EXPECT_EQ(r.at("line"), i + 1);
    const double lp = r.at("log_prob");
    const int64_t n = r.at("tokens");
    EXPECT_LT(lp, 0.0);
    EXPECT_GE(n, 2);  // at least one word and </s>
    EXPECT_DOUBLE_EQ(r.at("per_token").get<double>(), lp / static_cast<double>(n));
    EXPECT_NEAR(std::stod(sums[i]), lp, 1e-6) << sums[i];
    EXPECT_NEAR(std::stod(means[i]), lp / static_cast<double>(n), 1e-6) << means[i];
    EXPECT_EQ(rows_one[i].at("tokens"), n);
    EXPECT_NEAR(rows_one[i].at("log_prob").get<double>(), lp, 1e-5 * std::abs(lp));
    log_prob += lp, tokens += n;
  }
  const RunResult eval = run_luong_shell(std::string(LUONG_BINARY) + " eval --checkpoint " + checkpoint_ + " --src " +
                                         src + " --ref " + tgt + " --json 2>/dev/null");
  ASSERT_EQ(eval.status, 0) << eval.output;
  const nlohmann::json e = nlohmann::json::parse(eval.output);
  EXPECT_EQ(e.at("tokens"), tokens);
  EXPECT_NEAR(e.at("ppl").get<double>(), std::exp(-log_prob / static_cast<double>(tokens)),
              1e-5 * e.at("ppl").get<double>());
  EXPECT_NE(last_stderr().find("score: 12 pairs, " + std::to_string(tokens) + " target tokens, perplexity "),
            std::string::npos)
      << last_stderr();
}

TEST_F(ScoreCli, OneCheckpointTwiceScoresAsItDoesAlone) {
  const std::string src = data_ + "/test.src", tgt = data_ + "/test.tgt";
  const RunResult alone = score(src, tgt, "--json"), twice = score(src, tgt, "--json", checkpoint_ + " " + checkpoint_);
  ASSERT_EQ(twice.status, 0) << twice.output << last_stderr();
  const auto a = json_lines(alone.output), b = json_lines(twice.output);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(b[i].at("log_prob").get<double>(), a[i].at("log_prob").get<double>(), 1e-9) << i;
}

TEST_F(ScoreCli, ABlankSourceHasNoScoreAndABlankTargetIsScored) {
  const std::string src = write("blank.src", "hi zo .\n   \nja di .\n"), tgt = write("blank.tgt", "echo .\npapa .\n\n");
  const RunResult plain = score(src, tgt);
  ASSERT_EQ(plain.status, 0) << plain.output << last_stderr();
  const std::vector<std::string> out = lines(plain.output);
  ASSERT_EQ(out.size(), 3u) << plain.output;
  EXPECT_EQ(out[1], "nan");
  EXPECT_NE(last_stderr().find("warning: 1 of 3 lines have a blank source and no score (printed as nan)"),
            std::string::npos)
      << last_stderr();
  const RunResult js = score(src, tgt, "--json");
  const auto rows = json_lines(js.output);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[1].at("log_prob").is_null());
  EXPECT_TRUE(rows[1].at("per_token").is_null());
  EXPECT_EQ(rows[1].at("tokens"), 0);
  EXPECT_EQ(rows[2].at("tokens"), 1);  // </s> alone
  EXPECT_LT(rows[2].at("log_prob").get<double>(), 0.0);
  EXPECT_NEAR(std::stod(out[2]), rows[2].at("log_prob").get<double>(), 1e-6);
}

TEST_F(ScoreCli, AnNBestListIsScoredAsItsBeamSearchScoredIt) {
  const std::string src = write("nbest.src", "hi zo .\nja di zo ba .\n \ntu fu ga mi ja .\n");
  const RunResult tr =
      run_luong_shell(std::string(LUONG_BINARY) + " translate --checkpoint " + checkpoint_ +
                      " --beam 4 --n-best 4 --length-penalty 0 < " + src + " 2>/dev/null > " + data_ + "/nbest.txt");
  ASSERT_EQ(tr.status, 0) << tr.output;
  const RunResult r = score(src, "", "--n-best " + data_ + "/nbest.txt");
  ASSERT_EQ(r.status, 0) << r.output << last_stderr();
  std::ifstream nbest(data_ + "/nbest.txt");
  const std::vector<std::string> out = lines(r.output);
  size_t k = 0;
  for (std::string line; std::getline(nbest, line); ++k) {
    ASSERT_LT(k, out.size());
    // The line as read, then its score.
    ASSERT_EQ(out[k].substr(0, line.size() + 5), line + " ||| ") << out[k];
    const double beam_score = std::stod(line.substr(line.rfind(" ||| ") + 5));
    const std::string scored = out[k].substr(line.size() + 5);
    if (line.rfind("2 |||", 0) == 0) {  // the blank source: translated as nothing, scored as nothing
      EXPECT_EQ(scored, "nan");
      continue;
    }
    EXPECT_NEAR(std::stod(scored), beam_score, 1e-4 * std::abs(beam_score) + 1e-5) << out[k];
  }
  EXPECT_EQ(out.size(), k);
  EXPECT_GE(k, 10u);  // several hypotheses for each of the three sources

  const RunResult js = score(src, "", "--json --n-best " + data_ + "/nbest.txt");
  const auto rows = json_lines(js.output);
  ASSERT_EQ(rows.size(), k);
  EXPECT_EQ(rows.front().at("index"), 0);
  EXPECT_EQ(rows.back().at("index"), 3);
}

TEST_F(ScoreCli, MalformedNBestListsAndMissingTargetsAreNamed) {
  const std::string src = write("nb.src", "a\nb\n");
  for (const auto& [text, message] :
       {std::pair<std::string, std::string>{"0 ||| a\n2 ||| b ||| -1\n", "line 2: index 2 is past the 2 lines of "},
        {"0 ||| a\n-1 ||| b\n", "line 2: the index '-1' is not a number of a --src line (0-based)"},
        {"0 a\n", "line 1 is not 'index ||| hypothesis ||| ...' (no ' ||| ' in '0 a')"}}) {
    const RunResult r = score(src, "", "--n-best " + write("bad.nbest", text));
    EXPECT_EQ(r.status, 1) << text;
    EXPECT_NE(last_stderr().find(message), std::string::npos) << last_stderr();
  }
  RunResult r = score(src, "");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(last_stderr().find("one of --tgt (a target per source line) or --n-best (an n-best list) is required"),
            std::string::npos)
      << last_stderr();
  r = score(src, src, "--n-best " + src);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(last_stderr().find("--tgt excludes --n-best"), std::string::npos) << last_stderr();
}

// A NaN parameter would make every score NaN, which printed would read like a blank source's "nan": the
// checkpoint is refused as it loads, before anything is printed.
TEST_F(ScoreCli, ACheckpointWithANonFiniteParameterIsRefused) {
  const std::string bad = data_ + "/nan_param.h5";
  Checkpoint c = load_checkpoint(checkpoint_);
  c.state.tensors.at("model/decoder/output/bias").data<float>()[1] = std::numeric_limits<float>::quiet_NaN();
  save_checkpoint(bad, c.state, {{"dtype", "float32"}});
  const RunResult r = score(data_ + "/test.src", data_ + "/test.tgt", "", bad);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(last_stderr().find("parameter 'model/decoder/output/bias' holds NaN or infinite values"), std::string::npos)
      << last_stderr();
  EXPECT_EQ(r.output, "") << "nothing printed before the error";
}

// Finite parameters can still overflow: output biases of +-3e38 put a token's logit 6e38 below the largest, past
// float's range, so its log-probability is -inf. That is an error naming the line, not a score of "-inf" or a
// "nan" that would read like a blank source.
TEST_F(ScoreCli, AScoreThatOverflowsIsAnErrorNamingTheLine) {
  const std::string bad = data_ + "/overflowing_logits.h5";
  Checkpoint c = load_checkpoint(checkpoint_);
  Tensor& bias = c.state.tensors.at("model/decoder/output/bias");
  for (int64_t k = 0; k < bias.numel(); ++k) bias.data<float>()[k] = k % 2 == 0 ? 3e38f : -3e38f;
  save_checkpoint(bad, c.state, {{"dtype", "float32"}});
  const RunResult r = score(data_ + "/test.src", data_ + "/test.tgt", "", bad);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(last_stderr().find("score: the model gives line 1 the log-probability -inf (the logits of " + bad +
                               " overflow)"),
            std::string::npos)
      << last_stderr();
  EXPECT_EQ(r.output, "") << "nothing printed before the error";
}

TEST_F(ScoreCli, InputErrorsAreNamed) {
  const std::string src = write("three.src", "a\nb\nc\n"), tgt = write("two.tgt", "a\nb\n");
  RunResult r = score(src, tgt);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(last_stderr().find("has 3 lines but '" + tgt + "' has 2 lines (the files must be line-aligned)"),
            std::string::npos)
      << last_stderr();
  const std::string bad = write("bad.tgt", "a\n\xff\xfe\nc\n");
  r = score(src, bad);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(last_stderr().find("line 2"), std::string::npos) << last_stderr();
  EXPECT_NE(last_stderr().find("UTF-8"), std::string::npos) << last_stderr();
  r = score(src, src, "--batch-size 0");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(last_stderr().find("--batch-size must be >= 1, got 0"), std::string::npos) << last_stderr();
  const std::string empty = write("empty.src", "");
  r = score(empty, empty);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(last_stderr().find("is empty (no lines)"), std::string::npos) << last_stderr();
  r = score(src, data_ + "/missing.tgt");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(last_stderr().find("missing.tgt"), std::string::npos) << last_stderr();
}

}  // namespace
}  // namespace luong::testing
