// The command-line workflow end to end on the toy task: train (loss falls, same seed = same metrics),
// eval (text and JSON), translate (n-best, word alignments, unk replacement, attention plots), average, and the errors
// a user meets (mismatched checkpoints, bad config keys, missing files).
#include <gtest/gtest.h>
#include <png.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "tests/support/run_luong.h"
#include "tests/support/temp_dir.h"

namespace luong::testing {
namespace {

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = generated_corpus("cli_data", "--train 600 --valid 40 --test 20");
    run_ = fresh_dir("cli_run");
    const RunResult r = run_luong(train(run_, "--json"));
    ASSERT_EQ(r.status, 0) << r.output;
    summary_ = nlohmann::json::parse(r.output.substr(r.output.rfind('{')));
  }
  static std::string train(const std::string& run_dir, const std::string& extra = "") {
    return tiny_train_command(run_dir, data_) +
           " --quiet --set model.hidden_size=48 --set model.embedding_size=32 --set train.max_epochs=0" +
           " --set train.max_steps=300 --set train.valid_every=100 --set train.log_every=10 --set optim.lr=0.01" +
           " --set train.keep_checkpoints=0 " + extra;
  }
  static std::vector<nlohmann::json> metrics(const std::string& run_dir) {
    std::vector<nlohmann::json> out;
    std::ifstream in(run_dir + "/metrics.jsonl");
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  static std::string data_, run_;
  static nlohmann::json summary_;
};
std::string CliTest::data_, CliTest::run_;
nlohmann::json CliTest::summary_;

TEST_F(CliTest, TinyConfigLossFallsTenfold) {
  const auto m = metrics(run_);
  ASSERT_FALSE(m.empty());
  double first = -1, last = -1;
  for (const auto& r : m)
    if (r["type"] == "train") (first < 0 ? first : last) = r["loss"].get<double>(), last = r["loss"].get<double>();
  EXPECT_LT(last, first / 10) << "train loss " << first << " -> " << last;
  EXPECT_EQ(summary_["steps"], 300);
  EXPECT_GT(summary_["best_valid_ppl"].get<double>(), 1.0);
  EXPECT_LT(summary_["best_valid_ppl"].get<double>(), 1.5);
  for (const char* f : {"config.yaml", "vocab.src.txt", "vocab.tgt.txt", "best.h5", "metrics.jsonl"})
    EXPECT_TRUE(std::filesystem::exists(run_ + "/" + f)) << f;
}

TEST_F(CliTest, SameSeedGivesTheSameMetrics) {
  const std::string again = fresh_dir("cli_again");
  ASSERT_EQ(run_luong(train(again)).status, 0);
  auto strip = [](std::vector<nlohmann::json> v) {  // wall-clock fields legitimately differ
    for (auto& r : v)
      for (const char* k : {"elapsed_s", "tokens_per_s", "mem_allocated", "mem_peak", "mem_cached"}) r.erase(k);
    return v;
  };
  EXPECT_EQ(strip(metrics(run_)), strip(metrics(again)));
}

// --more-refs: BLEU and chrF against several references per sentence; perplexity stays on --ref. With the
// translations themselves as the second reference every n-gram matches and the closest reference length is
// the translation's: both scores are 100.
TEST_F(CliTest, EvalScoresAgainstMoreReferencesAndMeasuresPerplexityOnTheFirst) {
  const std::string args = "eval --checkpoint " + run_ + "/best.h5 --src " + data_ + "/test.src --ref " + data_ +
                           "/test.tgt --beam 3 --json";
  const std::string own = fresh_dir("cli_more_refs") + "/own.txt";
  const RunResult t = run_luong_shell(std::string(LUONG_BINARY) + " translate --checkpoint " + run_ +
                                      "/best.h5 --beam 3 < " + data_ + "/test.src > " + own);
  ASSERT_EQ(t.status, 0) << t.output;
  const RunResult one = run_luong(args + " 2>/dev/null"),
                  two = run_luong(args + " --more-refs " + own + " 2>/dev/null");
  ASSERT_EQ(one.status, 0) << one.output;
  ASSERT_EQ(two.status, 0) << two.output;
  const auto j1 = nlohmann::json::parse(one.output), j2 = nlohmann::json::parse(two.output);
  EXPECT_LT(j1["bleu"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(j2["bleu"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(j2["chrf"].get<double>(), 100.0);
  EXPECT_EQ(j2["ppl"], j1["ppl"]);
  EXPECT_EQ(j2["refs"], (nlohmann::json{data_ + "/test.tgt", own}));
  EXPECT_FALSE(j1.contains("refs"));
  EXPECT_NE(j2["bleu_signature"].get<std::string>().find("nrefs:2|"), std::string::npos) << j2;
  EXPECT_NE(j2["chrf_signature"].get<std::string>().find("nrefs:2|"), std::string::npos) << j2;
  // A reference file of another length is named.
  const std::string shorter = fresh_dir("cli_more_refs_short") + "/short.txt";
  std::ofstream(shorter) << "one line\n";
  const RunResult bad = run_luong(args + " --more-refs " + shorter);
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.output.find("eval: reference " + shorter + " has 1 lines but " + data_ + "/test.tgt has 20"),
            std::string::npos)
      << bad.output;
}

TEST_F(CliTest, EvalPrintsPerplexityBleuAndChrfForPeopleAndScripts) {
  const std::string args = "eval --checkpoint " + run_ + "/best.h5 --src " + data_ + "/test.src --ref " + data_ +
                           "/test.tgt --beam 3";
  const RunResult text = run_luong(args);
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.output.find("perplexity"), std::string::npos);
  EXPECT_NE(text.output.find("BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = "), std::string::npos)
      << text.output;
  const RunResult js = run_luong(args + " --json 2>/dev/null");
  ASSERT_EQ(js.status, 0) << js.output;
  const auto j = nlohmann::json::parse(js.output);
  EXPECT_GT(j["bleu"].get<double>(), 50.0) << "the toy task is easy";
  EXPECT_GT(j["ppl"].get<double>(), 1.0);
  EXPECT_EQ(j["sentences"], 20);
  // chrF too: a line for people, and for scripts the score `luong bleu -m chrf` gives the translations.
  EXPECT_NE(text.output.find("chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0 = "), std::string::npos)
      << text.output;
  const RunResult chrf =
      run_luong_shell(std::string(LUONG_BINARY) + " translate --checkpoint " + run_ + "/best.h5 --beam 3 < " + data_ +
                      "/test.src | " + LUONG_BINARY + " bleu -m chrf --json " + data_ + "/test.tgt");
  ASSERT_EQ(chrf.status, 0) << chrf.output;
  EXPECT_EQ(j["chrf"], nlohmann::json::parse(chrf.output)["score_unrounded"]);
  EXPECT_GT(j["chrf"].get<double>(), 50.0);
  // chrF++ on request, as `luong bleu --chrf-word-order 2` scores the same translations.
  const RunResult plusplus = run_luong(args + " --chrf-word-order 2 --json 2>/dev/null");
  ASSERT_EQ(plusplus.status, 0) << plusplus.output;
  const auto pj = nlohmann::json::parse(plusplus.output);
  const RunResult chrf_pp = run_luong_shell(std::string(LUONG_BINARY) + " translate --checkpoint " + run_ +
                                            "/best.h5 --beam 3 < " + data_ + "/test.src | " + LUONG_BINARY +
                                            " bleu -m chrf --chrf-word-order 2 --json " + data_ + "/test.tgt");
  ASSERT_EQ(chrf_pp.status, 0) << chrf_pp.output;
  EXPECT_EQ(pj["chrf"], nlohmann::json::parse(chrf_pp.output)["score_unrounded"]);
  EXPECT_NE(pj["chrf"], j["chrf"]);
  EXPECT_EQ(pj["chrf_signature"], "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0");
  EXPECT_EQ(pj["bleu"], j["bleu"]);
  // A source that can be read only once (a pipe) gives the same result: each file is read once.
  const RunResult piped =
      run_luong_shell("cat " + data_ + "/test.src | " + LUONG_BINARY + " eval --checkpoint " + run_ +
                      "/best.h5 --src /dev/stdin --ref " + data_ + "/test.tgt --beam 3 --json 2>/dev/null");
  ASSERT_EQ(piped.status, 0) << piped.output;
  EXPECT_EQ(nlohmann::json::parse(piped.output)["bleu"], j["bleu"]);
  EXPECT_EQ(nlohmann::json::parse(piped.output)["ppl"], j["ppl"]);
}

// --output keeps the translations (those `luong translate` prints) for a paired test of two checkpoints;
// --confidence adds the bootstrap estimates `luong bleu --confidence` gives those translations.
TEST_F(CliTest, EvalWritesItsTranslationsAndEstimatesConfidence) {
  const std::string dir = fresh_dir("cli_eval_output"), out = dir + "/best.txt";
  const std::string args = "eval --checkpoint " + run_ + "/best.h5 --src " + data_ + "/test.src --ref " + data_ +
                           "/test.tgt --beam 3 --output " + out;
  const RunResult js = run_luong(args + " --confidence --confidence-n 200 --json 2>/dev/null");
  ASSERT_EQ(js.status, 0) << js.output;
  const auto j = nlohmann::json::parse(js.output);
  const RunResult translated = run_luong_shell(std::string(LUONG_BINARY) + " translate --checkpoint " + run_ +
                                               "/best.h5 --beam 3 < " + data_ + "/test.src");
  ASSERT_EQ(translated.status, 0) << translated.output;
  std::ifstream in(out);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, translated.output);
  EXPECT_EQ(j["output"], out);
  const RunResult bleu =
      run_luong_shell(std::string(LUONG_BINARY) + " bleu " + data_ +
                      "/test.tgt -m bleu chrf --confidence --confidence-n 200 -w 10 --json -i " + out);
  ASSERT_EQ(bleu.status, 0) << bleu.output;
  const auto b = nlohmann::json::parse(bleu.output);
  EXPECT_NEAR(j["bleu_mean"].get<double>(), b[0]["confidence_mean"].get<double>(), 1e-9);
  EXPECT_NEAR(j["chrf_ci"].get<double>(), b[1]["confidence_var"].get<double>(), 1e-9);
  EXPECT_NEAR(j["bleu_mean"].get<double>(), j["bleu"].get<double>(), 10.0);
  EXPECT_GT(j["bleu_ci"].get<double>(), 0.0);
  EXPECT_GT(j["chrf_ci"].get<double>(), 0.0);
  EXPECT_EQ(j["bleu_signature"], "nrefs:1|bs:200|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
  const RunResult text = run_luong(args + " --confidence 2>/dev/null");
  EXPECT_NE(text.output.find("(\u03bc = "), std::string::npos) << text.output;
  // A directory that does not exist is named before anything is decoded.
  const RunResult bad = run_luong(args + "/missing/x.txt");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.output.find("eval: --output '" + out + "/missing/x.txt' cannot be written: its directory"),
            std::string::npos)
      << bad.output;
  EXPECT_EQ(bad.output.find("perplexity"), std::string::npos) << bad.output;
  // Nor may it name an input: the test set would be replaced by its translations.
  const RunResult onto_src = run_luong("eval --checkpoint " + run_ + "/best.h5 --src " + data_ + "/test.src --ref " +
                                       data_ + "/test.tgt --output " + data_ + "/./test.src");
  EXPECT_EQ(onto_src.status, 1);
  EXPECT_NE(onto_src.output.find("is the --src file " + data_ + "/test.src; the translations would replace it"),
            std::string::npos)
      << onto_src.output;
}

// A checkpoint path that is not UTF-8 (a Latin-1 directory name) reaches the JSON line as U+FFFD: the line is
// printed, not an exception at the end of the evaluation.
TEST_F(CliTest, EvalJsonNamesACheckpointWhosePathIsNotUtf8) {
  const std::string dir = fresh_dir("cli_latin1") + "/caf\xE9";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(run_ + "/best.h5", dir + "/best.h5");
  const RunResult r = run_luong("eval --checkpoint '" + dir + "/best.h5' --src " + data_ + "/test.src --ref " + data_ +
                                "/test.tgt --beam 1 --json 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_NE(j["checkpoint"].get<std::string>().find("caf\xEF\xBF\xBD/best.h5"), std::string::npos) << r.output;
  EXPECT_EQ(j["sentences"], 20);
}

// LUONG_PROFILE=1: at exit the two profile tables go to stderr, and stdout (the JSON a script reads) is unchanged.
TEST_F(CliTest, ProfileTablesGoToStderrAtExit) {
  const std::string eval = std::string(LUONG_BINARY) + " eval --checkpoint " + run_ + "/best.h5 --src " + data_ +
                           "/test.src --ref " + data_ + "/test.tgt --json";
  const RunResult err = run_luong_shell("LUONG_PROFILE=1 " + eval + " 2>&1 >/dev/null");
  ASSERT_EQ(err.status, 0) << err.output;
  for (const char* expected : {"CPU kernel profile (LUONG_PROFILE):", "| gemm |",
                               "CPU GEMM profile (LUONG_PROFILE):", "| kernel | op(A) op(B) | M x N, K |", "| all |"})
    EXPECT_NE(err.output.find(expected), std::string::npos) << expected << " in:\n" << err.output;
  const RunResult out = run_luong_shell("LUONG_PROFILE=1 " + eval + " 2>/dev/null");
  ASSERT_EQ(out.status, 0) << out.output;
  EXPECT_EQ(nlohmann::json::parse(out.output)["sentences"], 20);
  const RunResult quiet = run_luong_shell(eval + " 2>&1 >/dev/null");
  EXPECT_EQ(quiet.output.find("LUONG_PROFILE"), std::string::npos) << "no profile unless asked: " << quiet.output;
}

TEST_F(CliTest, TranslateNBestAndAttentionPlots) {
  const std::string plots = fresh_dir("cli_plots");
  const RunResult r = run_luong("translate --checkpoint " + run_ + "/best.h5 --beam 4 --n-best 3 --attention-plot " +
                                plots + " --plot-count 2 < " + data_ + "/test.src");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("0 ||| "), std::string::npos);
  EXPECT_NE(r.output.find("19 ||| "), std::string::npos);
  for (const char* f : {"1.png", "2.png"}) {
    const std::string path = plots + "/" + f;
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    png_image img{};
    img.version = PNG_IMAGE_VERSION;
    ASSERT_TRUE(png_image_begin_read_from_file(&img, path.c_str())) << path;
    EXPECT_GT(img.width, 50u);
    EXPECT_GT(img.height, 50u);
    png_image_free(&img);
  }
  EXPECT_FALSE(std::filesystem::exists(plots + "/3.png"));
}

// The toy language writes a sentence's words mapped and reversed, its final "." kept: target word j of n
// (the "." not counted) is source word n-2-j. The model learns that, and its hard word alignment says so; also
// for a model that reads its source backwards (model.reverse_source), whose attention columns are mapped back
// to source order (unmapped, its alignment would be the diagonal).
TEST_F(CliTest, TranslateAlignmentFollowsTheReversalTheModelLearned) {
  const std::string backwards = fresh_dir("cli_align_reversed");
  const RunResult t = run_luong(train(backwards, "--set model.reverse_source=true"));
  ASSERT_EQ(t.status, 0) << t.output;
  for (const std::string& checkpoint : {run_ + "/best.h5", backwards + "/best.h5"}) {
    const RunResult r =
        run_luong("translate --checkpoint " + checkpoint + " --alignment hard < " + data_ + "/test.src");
    ASSERT_EQ(r.status, 0) << r.output;
    std::ifstream src(data_ + "/test.src");
    std::istringstream out(r.output);
    int lines = 0, pairs = 0, reversed = 0;
    for (std::string source, line; std::getline(src, source) && std::getline(out, line); ++lines) {
      const size_t bar = line.find(" ||| ");
      ASSERT_NE(bar, std::string::npos) << line;
      std::istringstream src_words(source), tgt_words(line.substr(0, bar)), alignment(line.substr(bar + 5));
      const auto count = [](std::istringstream& s) {
        int n = 0;
        for (std::string w; s >> w;) ++n;
        return n;
      };
      const int n_src = count(src_words), n_tgt = count(tgt_words);
      std::vector<int> aligned(static_cast<size_t>(n_tgt), 0);
      for (std::string p; alignment >> p;) {
        const int i = std::stoi(p.substr(0, p.find('-'))), j = std::stoi(p.substr(p.find('-') + 1));
        ASSERT_TRUE(i >= 0 && i < n_src && j >= 0 && j < n_tgt) << line;
        ++aligned[static_cast<size_t>(j)];
        if (j == n_tgt - 1 || n_tgt != n_src) continue;  // the final "."; a translation of another length
        ++pairs;
        reversed += i == n_src - 2 - j;
      }
      for (int j = 0; j < n_tgt; ++j)
        EXPECT_EQ(aligned[static_cast<size_t>(j)], 1) << "hard: one pair a target word, " << line;
    }
    EXPECT_EQ(lines, 20);
    ASSERT_GT(pairs, 50) << checkpoint;
    EXPECT_GE(reversed, pairs * 9 / 10) << checkpoint << "\n" << r.output;
  }
  // With --n-best each entry carries its own alignment as a fourth field.
  const RunResult nbest = run_luong("translate --checkpoint " + run_ +
                                    "/best.h5 --beam 3 --n-best 2 --alignment 0.5 < " + data_ + "/test.src");
  ASSERT_EQ(nbest.status, 0) << nbest.output;
  EXPECT_EQ(nbest.output.rfind("0 ||| ", 0), 0u) << nbest.output;
  EXPECT_EQ(std::count(nbest.output.begin(), nbest.output.begin() + nbest.output.find('\n'), '|'), 9) << nbest.output;
}

// luong align forces the model to produce given translations and reads the attention: on the model's own greedy
// output it is the attention greedy decoding had (so the alignment translate printed), and against the toy
// language's true alignment (the reversal sure, the final "." possible) the trained model's error rate is low,
// a barely trained one's high.
TEST_F(CliTest, AlignReadsTheAttentionOfForcedDecodingAndScoresItAgainstGold) {
  const std::string dir = fresh_dir("cli_align");
  const std::string ckpt = run_ + "/best.h5", src = data_ + "/test.src";
  const RunResult greedy = run_luong("translate --checkpoint " + ckpt + " --beam 1 --alignment 0.05 < " + src);
  ASSERT_EQ(greedy.status, 0) << greedy.output;
  std::ofstream hyps(dir + "/hyps.txt"), links(dir + "/links.txt");
  std::istringstream lines(greedy.output);
  for (std::string line; std::getline(lines, line);) {
    const size_t bar = line.find(" ||| ");
    hyps << line.substr(0, bar) << "\n";
    links << line.substr(bar + 5) << "\n";
  }
  hyps.close(), links.close();
  const RunResult forced = run_luong_shell(std::string(LUONG_BINARY) + " align --checkpoint " + ckpt + " --src " + src +
                                           " --tgt " + dir + "/hyps.txt --alignment 0.05 2>/dev/null");
  ASSERT_EQ(forced.status, 0) << forced.output;
  EXPECT_EQ(forced.output, read_bytes(dir + "/links.txt"));

  std::ifstream in(src);
  std::ofstream gold(dir + "/gold.txt");
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    int n = 0;
    for (std::string w; words >> w;) ++n;
    for (int j = 0; j + 1 < n; ++j) gold << n - 2 - j << "-" << j << " ";
    gold << n - 1 << "?" << n - 1 << "\n";
  }
  gold.close();
  const auto aer_of = [&](const std::string& checkpoint) {
    const RunResult r = run_luong("align --checkpoint " + checkpoint + " --src " + src + " --tgt " + data_ +
                                  "/test.tgt --gold " + dir + "/gold.txt");
    EXPECT_EQ(r.status, 0) << r.output;
    const size_t at = r.output.find("AER ");
    return at == std::string::npos ? -1.0 : std::stod(r.output.substr(at + 4));
  };
  const RunResult barely = run_luong(train(dir + "/barely", "--set train.max_steps=5 --set train.valid_every=0"));
  ASSERT_EQ(barely.status, 0) << barely.output;
  const double trained = aer_of(ckpt), untrained = aer_of(dir + "/barely/ckpt-5.h5");
  EXPECT_GE(trained, 0.0);
  EXPECT_LT(trained, 0.2);
  EXPECT_GT(untrained, 0.6);
  // The same gold written target-first and counted from 1 (a gold set made for the other direction) scores the same.
  {
    std::ifstream plain(dir + "/gold.txt");
    std::ofstream flipped(dir + "/gold_flipped.txt");
    for (std::string line; std::getline(plain, line);) {
      std::istringstream links_in(line);
      for (std::string l; links_in >> l;) {
        const size_t m = l.find_first_of("-?");
        flipped << std::stoi(l.substr(m + 1)) + 1 << (l[m] == '-' ? "-" : "p") << std::stoi(l.substr(0, m)) + 1 << " ";
      }
      flipped << "\n";
    }
  }
  const RunResult same = run_luong("align --checkpoint " + ckpt + " --src " + src + " --tgt " + data_ +
                                   "/test.tgt --gold " + dir + "/gold_flipped.txt --gold-reversed --gold-one-based");
  ASSERT_EQ(same.status, 0) << same.output;
  const size_t at = same.output.find("AER ");
  ASSERT_NE(at, std::string::npos) << same.output;
  EXPECT_DOUBLE_EQ(std::stod(same.output.substr(at + 4)), trained) << same.output;

  // --json: a record per pair with the links the text lines print (a blank source's are null), then the summary
  // with the AER the text gives.
  {
    std::ofstream(dir + "/with_blank.src") << read_bytes(src) << "   \n";
    std::ofstream(dir + "/with_blank.tgt") << read_bytes(data_ + "/test.tgt") << "x\n";
    std::ofstream(dir + "/with_blank.gold") << read_bytes(dir + "/gold.txt") << "0-0\n";
    const std::string pairs = " --src " + dir + "/with_blank.src --tgt " + dir + "/with_blank.tgt";
    const RunResult text =
        run_luong_shell(std::string(LUONG_BINARY) + " align --checkpoint " + ckpt + pairs + " 2>/dev/null");
    const RunResult json = run_luong_shell(std::string(LUONG_BINARY) + " align --checkpoint " + ckpt + pairs +
                                           " --gold " + dir + "/with_blank.gold --json 2>/dev/null");
    ASSERT_EQ(json.status, 0) << json.output;
    std::istringstream text_lines(text.output), json_lines(json.output);
    std::string line, record;
    int64_t n = 0;
    while (std::getline(text_lines, line)) {
      ASSERT_TRUE(std::getline(json_lines, record)) << json.output;
      const auto j = nlohmann::json::parse(record);
      EXPECT_EQ(j["type"], "pair");
      EXPECT_EQ(j["line"], ++n);
      if (line.empty()) {
        EXPECT_TRUE(j["links"].is_null()) << record;
        continue;
      }
      std::string links;
      for (const auto& l : j["links"]) links += (links.empty() ? "" : " ") + str(l[0].get<int>(), "-", l[1].get<int>());
      EXPECT_EQ(links, line);
    }
    EXPECT_EQ(n, 21);
    ASSERT_TRUE(std::getline(json_lines, record)) << json.output;
    const auto summary = nlohmann::json::parse(record);
    EXPECT_EQ(summary["type"], "summary");
    EXPECT_EQ(summary["pairs"], 20);
    EXPECT_EQ(summary["blank_sources"], 1);
    // The blank source's gold link is missed: one more sure link than the plain run, none more proposed.
    EXPECT_GT(summary["aer"].get<double>(), trained);
    EXPECT_LT(summary["recall"].get<double>(), 1.0);
    EXPECT_FALSE(std::getline(json_lines, record)) << "nothing after the summary: " << json.output;
  }

  // Gold that does not fit the pairs is named: a line count, a link past the sentence, a link that is not one.
  std::ofstream(dir + "/one.src") << "hi hi zo .\n";
  std::ofstream(dir + "/one.tgt") << "papa echo echo .\n";
  std::ofstream(dir + "/two.txt") << "0-0\n1-1\n";
  std::ofstream(dir + "/past.txt") << "0-0 4-1\n";
  std::ofstream(dir + "/bad.txt") << "0-0 0:0\n";
  const std::pair<std::string, std::string> cases[] = {
      {"two.txt", "align: --gold " + dir + "/two.txt has 2 lines but " + dir + "/one.src has 1"},
      {"past.txt", "line 1: the link 4-1 is past the pair's 4 source and 4 target words"},
      {"bad.txt", "line 1: '0:0' is not a link"}};
  for (const auto& [file, message] : cases) {
    const RunResult r = run_luong("align --checkpoint " + ckpt + " --src " + dir + "/one.src --tgt " + dir +
                                  "/one.tgt --gold " + dir + "/" + file);
    EXPECT_EQ(r.status, 1) << file << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << file << "\n" << r.output;
  }
  std::ofstream(dir + "/fits.txt") << "2-0 1-1 0-2 3-3\n";
  const RunResult fits = run_luong("align --checkpoint " + ckpt + " --src " + dir + "/one.src --tgt " + dir +
                                   "/one.tgt --gold " + dir + "/fits.txt");
  EXPECT_EQ(fits.status, 0) << fits.output;
}

TEST_F(CliTest, UnkReplaceCopiesTheMostAttendedSourceWord) {
  // A target vocabulary of 8 words + specials: the other target words are <unk> in training, so the model
  // learns to emit <unk> for their source words.
  const std::string dir = fresh_dir("cli_unk");
  const RunResult t = run_luong(train(dir, "--set data.tgt_vocab_size=12"));
  ASSERT_EQ(t.status, 0) << t.output;
  const std::string sentences = data_ + "/test.src";
  const RunResult plain = run_luong("translate --checkpoint " + dir + "/best.h5 < " + sentences);
  ASSERT_EQ(plain.status, 0) << plain.output;
  ASSERT_NE(plain.output.find("<unk>"), std::string::npos) << "the capped vocabulary should produce <unk>";
  const RunResult replaced = run_luong("translate --checkpoint " + dir + "/best.h5 --unk-replace < " + sentences);
  ASSERT_EQ(replaced.status, 0) << replaced.output;
  EXPECT_EQ(replaced.output.find("<unk>"), std::string::npos) << replaced.output;
  // Source words are two-letter syllables; target words are NATO-alphabet words. Replaced words are copies
  // of source syllables, at the position the attention points to.
  std::ifstream first_src(sentences);
  std::string src_line;
  std::getline(first_src, src_line);
  const std::string first_out = replaced.output.substr(0, replaced.output.find('\n'));
  const std::string first_plain = plain.output.substr(0, plain.output.find('\n'));
  if (first_plain.find("<unk>") != std::string::npos) {
    bool copied = false;
    std::istringstream words(first_out);
    for (std::string w; words >> w;) copied = copied || (w.size() == 2 && src_line.find(w) != std::string::npos);
    EXPECT_TRUE(copied) << "'" << first_out << "' should contain a word of '" << src_line << "'";
  }
  // Through a dictionary: every replaced word becomes its dictionary entry.
  std::ofstream dict(dir + "/dict.tsv");
  for (const char* syl : {"ba", "da", "di", "fu", "ga", "hi", "ja", "lo", "mi", "re", "sa", "tu", "wu", "ke", "po", "zo"})
    dict << syl << "\tDICT\n";
  dict.close();
  const RunResult via_dict = run_luong("translate --checkpoint " + dir + "/best.h5 --unk-replace --dictionary " + dir +
                                       "/dict.tsv < " + sentences);
  ASSERT_EQ(via_dict.status, 0) << via_dict.output;
  EXPECT_NE(via_dict.output.find("DICT"), std::string::npos) << via_dict.output;
}

TEST_F(CliTest, AverageOfCheckpointsIsTheirMean) {
  const auto files = list_checkpoints(run_);
  ASSERT_GE(files.size(), 2u);
  const std::string a = files[files.size() - 2].path, b = files.back().path, out = run_ + "/avg.h5";
  const RunResult r = run_luong("average -o " + out + " " + a + " " + b);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto ta = load_checkpoint(a).state.tensors, tb = load_checkpoint(b).state.tensors,
             tm = load_checkpoint(out).state.tensors;
  const std::string name = "model/decoder/output/weight";
  ASSERT_TRUE(tm.count(name)) << "missing " << name;
  const auto va = ta.at(name).to_vector(), vb = tb.at(name).to_vector(), vm = tm.at(name).to_vector();
  for (size_t i = 0; i < vm.size(); i += 97) EXPECT_NEAR(vm[i], (va[i] + vb[i]) / 2, 1e-6);
  // The averaged checkpoint translates.
  EXPECT_EQ(run_luong("translate --checkpoint " + out, "alpha bravo .").status, 0);

  // --last 2 of the run directory picks the same two checkpoints: the same average, bit for bit.
  const std::string last = fresh_dir("cli_average_last") + "/last.h5";
  const RunResult l = run_luong("average -o " + last + " --last 2 " + run_);
  ASSERT_EQ(l.status, 0) << l.output;
  EXPECT_NE(l.output.find("average of 2 checkpoints: " + a + "," + b), std::string::npos) << l.output;
  const auto tl = load_checkpoint(last).state.tensors;
  for (const auto& [n, t] : tm) {
    if (n.rfind("model/", 0) != 0) continue;
    EXPECT_EQ(tl.at(n).to_vector(), t.to_vector()) << n;
  }
  // More than the run kept, fewer than two, or files instead of a run directory are named.
  const std::pair<std::string, std::string> refusals[] = {
      {"--last " + std::to_string(files.size() + 1) + " " + run_,
       str("holds ", files.size(), " step checkpoint(s) (", files.front().path)},
      {"--last 1 " + run_, "--last: must be at least 2, got 1"},
      {"--last 2 " + a + " " + b, "--last: takes one run directory instead of checkpoint files, got 2 paths"}};
  for (const auto& [args, message] : refusals) {
    const RunResult r2 = run_luong("average -o " + last + ".x " + args);
    EXPECT_NE(r2.status, 0) << args;
    EXPECT_NE(r2.output.find(message), std::string::npos) << args << "\n" << r2.output;
  }
}

TEST_F(CliTest, ResumingWithADifferentModelNamesTheParameterAndShapes) {
  const std::string dir = fresh_dir("cli_mismatch");
  std::filesystem::copy(run_, dir, std::filesystem::copy_options::recursive);
  const RunResult r = run_luong(train(dir, "--set model.hidden_size=40 --set train.max_steps=400 --resume auto"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("(48"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(40"), std::string::npos) << r.output;
  // A different vocabulary (built from other data) is refused too, naming the vocabulary.
  const RunResult v = run_luong(train(dir, "--set data.src_vocab_size=12 --set train.max_steps=400 --resume " + run_ + "/best.h5"));
  EXPECT_NE(v.status, 0);
  EXPECT_NE(v.output.find("vocab/src"), std::string::npos) << v.output;
}

TEST_F(CliTest, UserErrorsAreClear) {
  const RunResult key = run_luong(train(fresh_dir("cli_err"), "--set model.hiden_size=3"));
  EXPECT_NE(key.status, 0);
  EXPECT_NE(key.output.find("model.hiden_size"), std::string::npos) << key.output;
  EXPECT_NE(key.output.find("hidden_size"), std::string::npos) << key.output;  // lists the valid keys
  const RunResult att = run_luong(train(fresh_dir("cli_err2"), "--set model.attention=bahdanau"));
  EXPECT_NE(att.status, 0);
  EXPECT_NE(att.output.find("local-p"), std::string::npos) << att.output;  // lists the registered variants
  const RunResult missing = run_luong(train(fresh_dir("cli_err3"), "--set data.train_src=/nonexistent/x.src"));
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.output.find("/nonexistent/x.src"), std::string::npos) << missing.output;
  // A validation set of blank lines used to validate to perplexity 0, recorded as the best.
  const std::string blank = fresh_dir("cli_err_blank_valid") + "/blank.txt";
  std::ofstream(blank) << "\n  \n\t\n";
  const RunResult empty_valid =
      run_luong(train(fresh_dir("cli_err4"), "--set data.valid_src=" + blank + " --set data.valid_tgt=" + blank));
  EXPECT_NE(empty_valid.status, 0);
  EXPECT_NE(empty_valid.output.find("no validation pairs in " + blank), std::string::npos) << empty_valid.output;
  const RunResult ckpt = run_luong("eval --checkpoint " + data_ + "/test.src --src " + data_ + "/test.src --ref " +
                                   data_ + "/test.tgt");
  EXPECT_NE(ckpt.status, 0);
  EXPECT_NE(ckpt.output.find("test.src"), std::string::npos) << ckpt.output;
}

}  // namespace
}  // namespace luong::testing
