// `luong translate` as a streaming filter: each line is translated once it has arrived and the writer has
// paused, not at the end of the input, and translating in parts changes nothing in the output.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "framework/io/checkpoint_dir.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

class TranslateStream : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fresh_dir("translate_stream");
    ASSERT_EQ(run_luong("gen-data --out " + dir_ + "/data --train 200 --valid 10 --test 12").status, 0);
    const std::string d = dir_ + "/data/";
    const RunResult r =
        run_luong("train --quiet --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml --run-dir " + dir_ +
                  "/run --set data.train_src=" + d + "train.src --set data.train_tgt=" + d +
                  "train.tgt --set data.valid_src=" + d + "valid.src --set data.valid_tgt=" + d +
                  "valid.tgt --set train.max_epochs=0 --set train.max_steps=60 --set eval.batch_size=5");
    ASSERT_EQ(r.status, 0) << r.output;
    ckpt_ = checkpoint_path(dir_ + "/run", 60);
    src_ = d + "test.src";
  }
  static std::string translate(const std::string& options_and_input) {
    const RunResult r = run_luong_shell(std::string(LUONG_BINARY) + " translate --checkpoint " + ckpt_ + " " +
                                        options_and_input + " 2>&1");
    EXPECT_EQ(r.status, 0) << r.output;
    return r.output;
  }
  static std::string dir_, ckpt_, src_;
};
std::string TranslateStream::dir_, TranslateStream::ckpt_, TranslateStream::src_;

// The writer sends one line, waits, counts the lines of output so far, then sends the next: the first
// translation must already be there. (It used to appear only after the end of the input.)
TEST_F(TranslateStream, EachLineIsTranslatedBeforeTheNextArrives) {
  std::ifstream in(src_);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  const std::string out = dir_ + "/streamed.txt", seen = dir_ + "/seen.txt";
  const RunResult r =
      run_luong_shell("(echo '" + first + "'; sleep 2; wc -l < " + out + " > " + seen + "; echo '" + second + "') | " +
                      LUONG_BINARY + " translate --checkpoint " + ckpt_ + " --batch-size 1 > " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(std::stoi(run_luong_shell("cat " + seen).output), 1) << "no translation before the input paused";
  EXPECT_EQ(std::stoi(run_luong_shell("wc -l < " + out).output), 2);
  // The writer pauses in the middle of the second line: the first is translated all the same.
  const std::string half = second.substr(0, second.size() / 2), rest = second.substr(second.size() / 2);
  const RunResult mid = run_luong_shell("(printf '%s\\n%s' '" + first + "' '" + half + "'; sleep 2; wc -l < " + out +
                                        " > " + seen + "; printf '%s\\n' '" + rest + "') | " + LUONG_BINARY +
                                        " translate --checkpoint " + ckpt_ + " --batch-size 1 > " + out);
  ASSERT_EQ(mid.status, 0) << mid.output;
  EXPECT_EQ(std::stoi(run_luong_shell("cat " + seen).output), 1) << "a finished line waited for a half-written one";
  EXPECT_EQ(std::stoi(run_luong_shell("wc -l < " + out).output), 2);
}

// Parts of 4 batches of 1 (and n-best indices that continue across parts) give what one pass over the
// whole file gives.
TEST_F(TranslateStream, TranslatingInPartsChangesNothing) {
  EXPECT_EQ(translate("--batch-size 1 < " + src_), translate("--batch-size 64 < " + src_));
  const std::string nbest = translate("--batch-size 1 --beam 3 --n-best 2 < " + src_);
  EXPECT_EQ(nbest, translate("--batch-size 64 --beam 3 --n-best 2 < " + src_));
  EXPECT_NE(nbest.find("\n11 ||| "), std::string::npos) << nbest;  // the 12th sentence's index
}

// n-best lists hold up to N distinct hypotheses per sentence (as Moses's do): an empty line has exactly one,
// the empty translation with score 0, and the indices of the lines after it go on counting.
TEST_F(TranslateStream, AnEmptyLineHasOneEntryInAnNBestList) {
  std::ifstream in(src_);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  const std::string input = dir_ + "/with_empty.src";
  std::ofstream(input) << first << "\n\n" << second << "\n";
  const std::string out = translate("--beam 3 --n-best 2 < " + input);
  std::istringstream lines(out);
  std::vector<std::string> of_empty;
  int entries = 0;
  for (std::string line; std::getline(lines, line); ++entries)
    if (line.rfind("1 ||| ", 0) == 0) of_empty.push_back(line);
  EXPECT_EQ(entries, 5) << out;
  ASSERT_EQ(of_empty.size(), 1u) << out;
  EXPECT_EQ(of_empty[0], "1 |||  ||| 0") << out;
  EXPECT_NE(out.find("\n2 ||| "), std::string::npos) << out;
}

// A bad line ends the input with an error naming it, after the good lines read with it are translated (they
// were dropped when both arrived in one read).
TEST_F(TranslateStream, GoodLinesBeforeABadOneAreTranslated) {
  const std::string good = translate("--batch-size 8 < " + src_);
  const std::string first_two = good.substr(0, good.find('\n', good.find('\n') + 1) + 1);
  const std::string input = dir_ + "/bad_third.src";
  {
    std::ifstream in(src_);
    std::ofstream out(input, std::ios::binary);
    std::string line;
    for (int i = 0; i < 2 && std::getline(in, line); ++i) out << line << "\n";
    out << "broken \xC3(\n";
  }
  const RunResult r = run_luong_shell(std::string(LUONG_BINARY) + " translate --checkpoint " + ckpt_ +
                                      " --batch-size 8 < " + input + " 2>&1");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(r.output.rfind(first_two, 0), 0u) << r.output;
  EXPECT_NE(r.output.find("luong: error: standard input line 3: invalid UTF-8 at byte 7 of the line"),
            std::string::npos)
      << r.output;
}

// Decoding options not given on the command line come from the checkpoint's eval.* config (tiny.yaml's
// beam is 3; the batch size 5 was set when training), as `luong sweep` scores a trial; given ones win.
TEST_F(TranslateStream, DecodingDefaultsComeFromTheCheckpointsConfig) {
  const std::string test = dir_ + "/data/test.";
  auto eval_json = [&](const std::string& options) {
    const RunResult r = run_luong_shell(std::string(LUONG_BINARY) + " eval --checkpoint " + ckpt_ + " --src " + test +
                                        "src --ref " + test + "tgt --json " + options + " 2>/dev/null");
    EXPECT_EQ(r.status, 0) << r.output;
    return r.output;
  };
  const std::string configured = eval_json("");
  EXPECT_NE(configured.find("\"beam_size\":3"), std::string::npos) << configured;
  EXPECT_NE(eval_json("--beam 2").find("\"beam_size\":2"), std::string::npos);
  const nlohmann::json batch5 = nlohmann::json::parse(configured),
                       batch1 = nlohmann::json::parse(eval_json("--batch-size 1"));
  EXPECT_EQ(batch5["batch_size"], 5);
  EXPECT_EQ(batch1["batch_size"], 1);
  // The batch size is speed only: the same translations, so the same BLEU; the perplexity's float32 sums
  // are grouped differently (3e-8 relative apart here).
  EXPECT_EQ(batch5["bleu_line"], batch1["bleu_line"]);
  EXPECT_NEAR(batch5["ppl"].get<double>(), batch1["ppl"].get<double>(), 1e-6 * batch1["ppl"].get<double>());
  // --n-best is checked against the checkpoint's beam when --beam is not given.
  const std::string three = translate("--n-best 3 < " + src_);
  size_t first_sentence = 0;
  for (size_t at = 0; (at = three.find("0 ||| ", at)) != std::string::npos; ++at)
    first_sentence += at == 0 || three[at - 1] == '\n';
  EXPECT_EQ(first_sentence, 3u) << three;
  const RunResult too_many = run_luong_shell(std::string(LUONG_BINARY) + " translate --checkpoint " + ckpt_ +
                                             " --n-best 4 < " + src_ + " 2>&1");
  EXPECT_NE(too_many.status, 0);
  EXPECT_NE(too_many.output.find("--n-best must be at most --beam (3)"), std::string::npos) << too_many.output;
}

}  // namespace
}  // namespace luong::testing
