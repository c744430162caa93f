// Training on BPE subword units (data.bpe_merges): the merges go with the run (bpe.merges.txt, the
// checkpoint), eval and translate read them from the checkpoint and print whole words, a resumed run equals
// an uninterrupted one, and a checkpoint is never read through other merges than its own. data.bpe_codes reads
// the merges from a file instead: a run on another run's bpe.merges.txt trains as that run did. Per-side merges
// (data.bpe_joint: false, data.bpe_codes_tgt) go with the run the same way, under their own names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "models/nmt/data/bpe.h"
#include "models/nmt/data/corpus.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

const std::string kJoinerText(nmt::kJoiner);

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

class BpeCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { data_ = generated_corpus("bpe_cli_data", "--train 600 --valid 30 --test 10"); }
  static std::string train(const std::string& run_dir, int64_t steps, const std::string& extra = "") {
    return tiny_train_command(run_dir, data_) +
           " --quiet --set model.hidden_size=32 --set model.embedding_size=24 --set model.dropout=0.2" +
           " --set train.max_epochs=0 --set train.max_steps=" + std::to_string(steps) +
           " --set train.valid_every=20 --set train.keep_checkpoints=0 --set optim.lr=0.01 " + extra;
  }
  static StateDict model_of(const std::string& path) { return load_checkpoint(path).state.sub("model"); }
  using Sentences = std::vector<std::vector<std::string>>;
  // The training text's words, each side's sentences: what merges are learned from.
  static std::pair<Sentences, Sentences> training_words() {
    const nmt::TokenizedCorpus words =
        nmt::tokenize_corpus(nmt::read_parallel(data_ + "/train.src", data_ + "/train.tgt"), nmt::Tokenizer());
    std::pair<Sentences, Sentences> out;
    for (size_t i = 0; i < words.src.size(); ++i)
      out.first.push_back(words.strings(words.src, i)), out.second.push_back(words.strings(words.tgt, i));
    return out;
  }
  // Trains `run` for 200 steps with `extra` and checks what a run on subword units gives its users: eval reads
  // the validation set through the checkpoint's merges, as training did (the same perplexity), and the model
  // learned something; translate prints whole words, a line per source line.
  static void train_and_check_eval_and_translate(const std::string& run, const std::string& extra) {
    const RunResult r = run_luong(train(run, 200, extra + " --json"));
    ASSERT_EQ(r.status, 0) << r.output;
    const double best_valid_ppl = nlohmann::json::parse(r.output.substr(r.output.rfind('{')))["best_valid_ppl"];
    const RunResult e = run_luong("eval --checkpoint " + best_checkpoint_path(run) + " --src " + data_ +
                                  "/valid.src --ref " + data_ + "/valid.tgt --json 2>/dev/null");
    ASSERT_EQ(e.status, 0) << e.output;
    const auto j = nlohmann::json::parse(e.output);
    EXPECT_GT(j["bleu"].get<double>(), 0.0) << "the model learned nothing: " << e.output;
    EXPECT_NEAR(j["ppl"].get<double>(), best_valid_ppl, 1e-4 * best_valid_ppl) << e.output;
    const RunResult t = run_luong("translate --checkpoint " + best_checkpoint_path(run) + " < " + data_ + "/test.src");
    ASSERT_EQ(t.status, 0) << t.output;
    EXPECT_EQ(t.output.find(kJoinerText), std::string::npos) << "pieces were not joined: " << t.output;
    EXPECT_EQ(std::count(t.output.begin(), t.output.end(), '\n'), 10) << t.output;
  }
  // Every parameter of the two checkpoints, bit for bit.
  static void expect_same_parameters(const std::string& path_a, const std::string& path_b) {
    const StateDict a = model_of(path_a), b = model_of(path_b);
    ASSERT_EQ(a.tensors.size(), b.tensors.size());
    for (const auto& [name, t] : a.tensors) {
      const Tensor& u = b.tensors.at(name);
      ASSERT_EQ(t.nbytes(), u.nbytes()) << name;
      EXPECT_EQ(0, std::memcmp(t.raw(), u.raw(), t.nbytes())) << "parameter " << name << " differs";
    }
  }
  // Each command fails (with exactly `status` when it is not 0) and says its message.
  static void expect_refused(const std::vector<std::pair<std::string, std::string>>& cases, int status = 0) {
    for (const auto& [args, message] : cases) {
      const RunResult r = run_luong(args);
      if (status != 0) {
        EXPECT_EQ(r.status, status) << args << "\n" << r.output;
      } else {
        EXPECT_NE(r.status, 0) << args << "\n" << r.output;
      }
      EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
    }
  }
  static std::string data_;
};
std::string BpeCliTest::data_;

TEST_F(BpeCliTest, TheMergesGoWithTheRunAndEvalAndTranslateReadWholeWords) {
  const std::string run = fresh_dir("bpe_cli_run");
  ASSERT_NO_FATAL_FAILURE(train_and_check_eval_and_translate(run, "--set data.bpe_merges=40"));
  // The merges are those of the training words of both sides, as the library learns them.
  const auto [src, tgt] = training_words();
  const std::vector<std::string> merges = nmt::Bpe::learn({&src, &tgt}, 40).to_list();
  ASSERT_EQ(merges.size(), 40u);
  EXPECT_EQ(lines_of(run + "/bpe.merges.txt"), merges);
  const Checkpoint best = load_checkpoint(best_checkpoint_path(run));
  EXPECT_EQ(split_string_list(best.state.strings.at("bpe/merges")), merges);
  // 40 merges leave some of the toy target words ("foxtrot", "juliett") in pieces: "token<TAB>count" lines of
  // the vocabulary hold pieces that end in a joiner.
  const auto tgt_vocab = lines_of(run + "/vocab.tgt.txt");
  EXPECT_TRUE(std::any_of(tgt_vocab.begin(), tgt_vocab.end(), [](const std::string& line) {
    const std::string token = line.substr(0, line.find('\t'));
    return token.size() > kJoinerText.size() && token.ends_with(kJoinerText);
  })) << "no subword piece in the target vocabulary";
}

TEST_F(BpeCliTest, AResumedRunEqualsAnUninterruptedOne) {
  const std::string straight = fresh_dir("bpe_cli_straight"), resumed = fresh_dir("bpe_cli_resumed");
  ASSERT_EQ(run_luong(train(straight, 40, "--set data.bpe_merges=20")).status, 0);
  ASSERT_EQ(run_luong(train(resumed, 20, "--set data.bpe_merges=20")).status, 0);
  const RunResult r = run_luong(train(resumed, 40, "--set data.bpe_merges=20 --resume auto"));
  ASSERT_EQ(r.status, 0) << r.output;
  expect_same_parameters(checkpoint_path(straight, 40), checkpoint_path(resumed, 40));
}

TEST_F(BpeCliTest, ARunOnAnotherRunsMergesFileTrainsAsThatRunDid) {
  const std::string learned = fresh_dir("bpe_cli_learned"), read = fresh_dir("bpe_cli_read");
  ASSERT_EQ(run_luong(train(learned, 20, "--set data.bpe_merges=30")).status, 0);
  // Kept outside the run directories (a run with --overwrite would remove its own).
  const std::string codes = fresh_dir("bpe_cli_codes") + "/codes.txt";
  std::filesystem::copy_file(learned + "/bpe.merges.txt", codes);
  const RunResult r = run_luong(train(read, 20, "--set data.bpe_codes=" + codes));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(lines_of(read + "/bpe.merges.txt"), lines_of(codes));
  expect_same_parameters(checkpoint_path(learned, 20), checkpoint_path(read, 20));
  // Resuming compares the file's merges with the checkpoint's; another file is refused, and so is asking for
  // both ways at once.
  std::vector<std::string> first_ten = lines_of(codes);
  first_ten.resize(10);
  const std::string fewer = fresh_dir("bpe_cli_codes10") + "/codes.txt";
  std::ofstream(fewer) << "#version: 0.2\n" << join_lines(first_ten);
  const std::vector<std::pair<std::string, std::string>> refused = {
      {train(read, 40, "--resume auto --set data.bpe_codes=" + fewer), "'bpe/merges' has 30 items, expected 10"},
      {train(read, 40, "--resume auto --set data.bpe_codes="),
       "was trained on BPE subword units (30 merges), but this run's config sets neither"},
      {train(fresh_dir("bpe_cli_both"), 20, "--set data.bpe_merges=30 --set data.bpe_codes=" + codes),
       "data.bpe_merges (30) and data.bpe_codes ('" + codes + "') are both set"},
      {train(fresh_dir("bpe_cli_missing"), 20, "--set data.bpe_codes=" + codes + ".gone"),
       "file '" + codes + ".gone' cannot be read"},
  };
  expect_refused(refused);
  // The same file with a subword-nmt header resumes the run.
  const std::string with_header = fresh_dir("bpe_cli_codes_header") + "/codes.txt";
  std::ofstream(with_header) << "#version: 0.2\n" << join_lines(lines_of(codes));
  const RunResult resumed = run_luong(train(read, 40, "--resume auto --set data.bpe_codes=" + with_header));
  EXPECT_EQ(resumed.status, 0) << resumed.output;
}

TEST_F(BpeCliTest, ACheckpointIsNeverReadThroughOtherMerges) {
  const std::string subwords = fresh_dir("bpe_cli_subwords"), words = fresh_dir("bpe_cli_words");
  ASSERT_EQ(run_luong(train(subwords, 20, "--set data.bpe_merges=12")).status, 0);
  ASSERT_EQ(run_luong(train(words, 20)).status, 0);
  const std::vector<std::pair<std::string, std::string>> refused = {
      {train(subwords, 40, "--resume auto"),
       "was trained on BPE subword units (12 merges), but this run's config sets neither data.bpe_merges nor "
       "data.bpe_codes"},
      {train(subwords, 40, "--resume auto --set data.bpe_merges=8"), "'bpe/merges' has 12 items, expected 8"},
      {train(words, 40, "--resume auto --set data.bpe_merges=12"),
       "was trained on whole words (it has no BPE merges), but data.bpe_merges is 12"},
      {"translate --checkpoint " + best_checkpoint_path(subwords) + " " + best_checkpoint_path(words) + " < " + data_ +
           "/test.src",
       "splits words into other subword units than " + best_checkpoint_path(subwords) +
           " (whole words vs 12 BPE merges)"},
      {"average -o " + words + "/avg.h5 " + checkpoint_path(subwords, 20) + " " + checkpoint_path(words, 20),
       "'bpe/merges' is in " + checkpoint_path(subwords, 20) + " but missing from " + checkpoint_path(words, 20)},
  };
  expect_refused(refused, 1);
  // The refused resumes left the runs as they were.
  EXPECT_TRUE(std::filesystem::exists(checkpoint_path(subwords, 20)));
  EXPECT_FALSE(std::filesystem::exists(checkpoint_path(subwords, 40)));
}

TEST_F(BpeCliTest, PerSideMergesGoWithTheRunAndEvalReadsEachSideThroughItsOwn) {
  const std::string run = fresh_dir("bpe_cli_per_side");
  // eval reads the references through the target's merges, translate the source through the source's.
  ASSERT_NO_FATAL_FAILURE(
      train_and_check_eval_and_translate(run, "--set data.bpe_merges=40 --set data.bpe_joint=false"));
  // Each side's merges are those of its own training words.
  const auto [src, tgt] = training_words();
  // The toy source has few word types: no pair is left twice after 16 merges.
  const std::vector<std::string> src_merges = nmt::Bpe::learn({&src}, 40).to_list();
  ASSERT_EQ(src_merges.size(), 16u);
  const std::vector<std::string> tgt_merges = nmt::Bpe::learn({&tgt}, 40).to_list();
  ASSERT_NE(src_merges, tgt_merges);
  ASSERT_NE(src_merges, nmt::Bpe::learn({&src, &tgt}, 40).to_list());
  EXPECT_EQ(lines_of(run + "/bpe.src.merges.txt"), src_merges);
  EXPECT_EQ(lines_of(run + "/bpe.tgt.merges.txt"), tgt_merges);
  EXPECT_FALSE(std::filesystem::exists(run + "/bpe.merges.txt"));
  const Checkpoint best = load_checkpoint(best_checkpoint_path(run));
  EXPECT_EQ(split_string_list(best.state.strings.at("bpe/merges_src")), src_merges);
  EXPECT_EQ(split_string_list(best.state.strings.at("bpe/merges_tgt")), tgt_merges);
  EXPECT_FALSE(best.state.strings.count("bpe/merges"));

  // A run on the two files trains as the run that learned them (kept outside the run directory).
  const std::string codes = fresh_dir("bpe_cli_per_side_codes"), read = fresh_dir("bpe_cli_per_side_read");
  std::filesystem::copy_file(run + "/bpe.src.merges.txt", codes + "/src.txt");
  std::filesystem::copy_file(run + "/bpe.tgt.merges.txt", codes + "/tgt.txt");
  const std::string from_files =
      "--set data.bpe_codes=" + codes + "/src.txt --set data.bpe_codes_tgt=" + codes + "/tgt.txt";
  const RunResult f = run_luong(train(read, 20, from_files));
  ASSERT_EQ(f.status, 0) << f.output;
  expect_same_parameters(checkpoint_path(run, 20), checkpoint_path(read, 20));

  // Never read through joint merges, or the sides' files swapped; nor mixed with a joint model.
  const std::string joint = fresh_dir("bpe_cli_per_side_joint");
  ASSERT_EQ(run_luong(train(joint, 20, "--set data.bpe_merges=40")).status, 0);
  const std::string swapped =
      "--set data.bpe_codes=" + codes + "/tgt.txt --set data.bpe_codes_tgt=" + codes + "/src.txt";
  const std::vector<std::pair<std::string, std::string>> refused = {
      {train(read, 40, "--resume auto --set data.bpe_merges=40"),
       "was trained on per-side BPE merges (16 source BPE merges and 40 target BPE merges), but data.bpe_merges is "
       "40 makes joint ones"},
      {train(joint, 40, "--resume auto --set data.bpe_merges=40 --set data.bpe_joint=false"),
       "was trained on joint BPE merges (40 BPE merges), but data.bpe_merges is 40 with data.bpe_joint false makes "
       "per-side ones"},
      {train(read, 40, "--resume auto " + swapped), "'bpe/merges_src'"},
      {"translate --checkpoint " + best_checkpoint_path(run) + " " + best_checkpoint_path(joint) + " < " + data_ +
           "/test.src",
       "(40 BPE merges vs 16 source BPE merges and 40 target BPE merges)"},
      {"average -o " + joint + "/avg.h5 " + checkpoint_path(run, 20) + " " + checkpoint_path(joint, 20),
       "'bpe/merges' is in " + checkpoint_path(joint, 20) + " but missing from " + checkpoint_path(run, 20)},
  };
  expect_refused(refused, 1);
  EXPECT_FALSE(std::filesystem::exists(checkpoint_path(read, 40))) << "a refused resume trained";
  // Settings that cannot mean per-side files are refused before anything is read.
  std::vector<std::pair<std::string, std::string>> bad_settings = {
      {"--set data.bpe_codes_tgt=" + codes + "/tgt.txt",
       "data.bpe_codes_tgt ('" + codes + "/tgt.txt') is set but data.bpe_codes is not"},
      {"--set data.bpe_joint=false --set data.bpe_codes=" + codes + "/src.txt",
       "data.bpe_joint is false but data.bpe_codes ('" + codes + "/src.txt') is one file for both sides"},
  };
  for (auto& [extra, message] : bad_settings) extra = train(fresh_dir("bpe_cli_per_side_bad"), 20, extra);
  expect_refused(bad_settings);
  // And one that does nothing says so.
  const RunResult on_words = run_luong(train(fresh_dir("bpe_cli_per_side_words"), 1, "--set data.bpe_joint=false"));
  EXPECT_EQ(on_words.status, 0) << on_words.output;
  EXPECT_NE(on_words.output.find("warning: data.bpe_joint = false has no effect without data.bpe_merges"),
            std::string::npos)
      << on_words.output;
}

}  // namespace
}  // namespace luong::testing
