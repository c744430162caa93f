// `luong eval --by-length W` and `luong bleu --src SRC --by-length W`: the sentences grouped by source length, each
// group scored as a corpus of its own. Checked against `luong bleu` on group files the test writes itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "framework/io/checkpoint_dir.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

using nlohmann::json;

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path);
  for (const auto& l : lines) out << l << "\n";
}

class LengthAnalysisCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = generated_corpus("length_cli_data", "--train 300 --valid 20 --test 60");
    const std::string dir = fresh_dir("length_cli_run");
    // Trained briefly: its translations are partly wrong, so the groups score differently.
    const RunResult r =
        run_luong(tiny_train_command(dir, data_) + " --quiet --set train.max_epochs=0 --set train.max_steps=40");
    ASSERT_EQ(r.status, 0) << r.output;
    checkpoint_ = checkpoint_path(dir, 40);
  }
  static std::string data_, checkpoint_;
};
std::string LengthAnalysisCli::data_, LengthAnalysisCli::checkpoint_;

TEST_F(LengthAnalysisCli, EachGroupScoresAsTheCorpusOfItsSentences) {
  const std::string hyp = data_ + "/hyp.txt";
  const RunResult r =
      run_luong_shell(std::string(LUONG_BINARY) + " eval --checkpoint " + checkpoint_ + " --src " + data_ +
                      "/test.src --ref " + data_ + "/test.tgt --by-length 3 --json --output " + hyp + " 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.output;
  const json eval = json::parse(r.output);
  const json& groups = eval["by_length"];
  // The groups the test makes itself: line numbers by (words - 1) / 3.
  const auto src = lines_of(data_ + "/test.src"), ref = lines_of(data_ + "/test.tgt"), out = lines_of(hyp);
  ASSERT_EQ(out.size(), src.size());
  std::map<int, std::vector<size_t>> members;
  for (size_t i = 0; i < src.size(); ++i) {
    std::istringstream words(src[i]);
    int n = 0;
    for (std::string w; words >> w;) ++n;
    members[(n - 1) / 3].push_back(i);
  }
  ASSERT_EQ(groups.size(), members.size());
  ASSERT_GE(groups.size(), 2u);
  size_t g = 0;
  std::vector<double> scores;
  for (const auto& [index, lines] : members) {
    const json& group = groups[g++];
    EXPECT_EQ(group["first"], index * 3 + 1);
    EXPECT_EQ(group["last"], index * 3 + 3);
    EXPECT_EQ(group["sentences"], lines.size());
    std::vector<std::string> h, t;
    for (size_t i : lines) h.push_back(out[i]), t.push_back(ref[i]);
    write_lines(data_ + "/group.hyp", h);
    write_lines(data_ + "/group.ref", t);
    const RunResult b = run_luong("bleu " + data_ + "/group.ref -i " + data_ + "/group.hyp -m bleu chrf --json");
    ASSERT_EQ(b.status, 0) << b.output;
    const json both = json::parse(b.output);
    EXPECT_NEAR(group["bleu"].get<double>(), both[0]["score_unrounded"].get<double>(), 1e-9) << index;
    EXPECT_NEAR(group["chrf"].get<double>(), both[1]["score_unrounded"].get<double>(), 1e-9) << index;
    scores.push_back(group["bleu"]);
  }
  // Not one score repeated: the groups are scored apart, not copies of the whole corpus's score.
  EXPECT_NE(*std::min_element(scores.begin(), scores.end()), *std::max_element(scores.begin(), scores.end()));
  const double whole = eval["bleu"];
  for (double s : scores) EXPECT_NE(s, whole);

  // luong bleu groups any outputs the same way: the first system's scores are eval's, the second its own.
  const std::string other = data_ + "/other.txt";
  auto shifted = out;
  std::rotate(shifted.begin(), shifted.begin() + 1, shifted.end());
  write_lines(other, shifted);
  const RunResult side = run_luong("bleu " + data_ + "/test.tgt -i " + hyp + " " + other + " --src " + data_ +
                                   "/test.src --by-length 3 -m bleu chrf --json");
  ASSERT_EQ(side.status, 0) << side.output;
  const json s = json::parse(side.output);
  ASSERT_EQ(s["by_length"].size(), groups.size());
  EXPECT_EQ(s["systems"], json::array({hyp, other}));
  for (size_t k = 0; k < groups.size(); ++k) {
    EXPECT_EQ(s["by_length"][k]["sentences"], groups[k]["sentences"]);
    EXPECT_NEAR(s["by_length"][k]["bleu"][hyp].get<double>(), groups[k]["bleu"].get<double>(), 1e-9);
    EXPECT_NEAR(s["by_length"][k]["chrf"][hyp].get<double>(), groups[k]["chrf"].get<double>(), 1e-9);
    EXPECT_NE(s["by_length"][k]["bleu"][other], s["by_length"][k]["bleu"][hyp]);
  }
  EXPECT_NE(s["bleu_signature"].get<std::string>().find("nrefs:1"), std::string::npos);

  // The text tables: a header and one row per group.
  const RunResult text = run_luong("eval --checkpoint " + checkpoint_ + " --src " + data_ + "/test.src --ref " + data_ +
                                   "/test.tgt --by-length 3");
  ASSERT_EQ(text.status, 0) << text.output;
  const std::string first_row =
      std::to_string(groups[0]["first"].get<int>()) + "-" + std::to_string(groups[0]["last"].get<int>()) + " ";
  EXPECT_NE(text.output.find("by source length:\nsource words  sentences    BLEU    chrF  len ratio\n" + first_row),
            std::string::npos)
      << text.output;
}

TEST_F(LengthAnalysisCli, MistakesAreNamed) {
  const std::string ref = data_ + "/test.tgt";
  RunResult r = run_luong("bleu " + ref + " -i " + ref + " --by-length 3");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--by-length requires --src"), std::string::npos) << r.output;
  r = run_luong("bleu " + ref + " -i " + ref + " --src " + data_ + "/valid.src --by-length 3");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("the source " + data_ + "/valid.src has 20 lines but the reference " + ref + " has 60"),
            std::string::npos)
      << r.output;
  r = run_luong("bleu " + ref + " -i " + ref + " --src " + data_ + "/test.src --by-length 3 --paired-bs");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("excludes --by-length"), std::string::npos) << r.output;
  r = run_luong("eval --checkpoint " + checkpoint_ + " --src " + data_ + "/test.src --ref " + ref + " --by-length 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--by-length"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace luong::testing
