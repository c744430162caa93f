// The command line's checks on what users hand it: checkpoints to average, decoding options, text with NUL
// bytes or read from a directory, empty lines and test sets, failed writes to standard output, mistyped
// subcommands, and messages that show luong's internals only under LUONG_DEBUG.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

bool has(const RunResult& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

// Runs a shell line in which the word LUONG stands for the binary; the line says where stdout and stderr go.
RunResult sh(const std::string& line) {
  std::string cmd = line;
  for (size_t at; (at = cmd.find("LUONG ")) != std::string::npos;) cmd.replace(at, 5, LUONG_BINARY);
  return run_luong_shell(cmd);
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

class CliInputChecks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fresh_dir("cli_checks");
    ASSERT_EQ(run_luong("gen-data --out " + dir_ + "/data --train 200 --valid 10 --test 6").status, 0);
    const std::string d = dir_ + "/data/";
    const RunResult r = run_luong(
        "train --quiet --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml --run-dir " + dir_ +
        "/run --set data.train_src=" + d + "train.src --set data.train_tgt=" + d + "train.tgt --set data.valid_src=" +
        d + "valid.src --set data.valid_tgt=" + d + "valid.tgt --set model.hidden_size=32" +
        " --set model.embedding_size=32 --set train.max_epochs=0 --set train.max_steps=80 --set train.valid_every=40" +
        " --set train.keep_checkpoints=0");
    ASSERT_EQ(r.status, 0) << r.output;
    const auto files = list_checkpoints(dir_ + "/run");
    ASSERT_GE(files.size(), 2u);
    a_ = files[0].path;
    b_ = files[1].path;
    ckpt_ = dir_ + "/run/best.h5";
    src_ = d + "test.src";
    ref_ = d + "test.tgt";
  }
  // A copy of checkpoint `from` at `to` with the string entry `name` changed by `edit`.
  static void copy_with_string(const std::string& from, const std::string& to, const std::string& name,
                               const std::function<std::string(std::string)>& edit) {
    Checkpoint c = load_checkpoint(from);
    c.state.strings[name] = edit(c.state.strings.at(name));
    save_checkpoint(to, c.state);
  }
  static std::string dir_, a_, b_, ckpt_, src_, ref_;
};
std::string CliInputChecks::dir_, CliInputChecks::a_, CliInputChecks::b_, CliInputChecks::ckpt_, CliInputChecks::src_,
    CliInputChecks::ref_;

// --- luong average -------------------------------------------------------------------------------------

TEST_F(CliInputChecks, AverageRefusesDifferentVocabularies) {
  // Same sizes, so every shape matches: only the words differ (two entries swapped).
  const std::string other = dir_ + "/vocab_swapped.h5";
  copy_with_string(b_, other, "vocab/tgt", [](std::string v) {
    std::vector<std::string> items = split_string_list(v);
    std::swap(items[5], items[6]);
    return join_string_list(items);
  });
  const RunResult r = run_luong("average -o " + dir_ + "/avg_vocab.h5 " + a_ + " " + other);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "vocab/tgt")) << r.output;
  EXPECT_TRUE(has(r, other)) << r.output;
  EXPECT_TRUE(has(r, "item 5")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/avg_vocab.h5"));
}

TEST_F(CliInputChecks, AverageRefusesDifferentModelConfig) {
  const std::string other = dir_ + "/reversed.h5";
  copy_with_string(b_, other, "config", [](std::string cfg) {
    const size_t at = cfg.find("reverse_source: false");
    EXPECT_NE(at, std::string::npos) << cfg;
    return at == std::string::npos ? cfg : cfg.replace(at, 21, "reverse_source: true");
  });
  const RunResult r = run_luong("average -o " + dir_ + "/avg_cfg.h5 " + a_ + " " + other);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "model.reverse_source")) << r.output;
  EXPECT_TRUE(has(r, other)) << r.output;
}

TEST_F(CliInputChecks, AverageRefusesToOverwriteAnInput) {
  const std::string copy = dir_ + "/input_copy.h5";
  std::filesystem::copy_file(b_, copy, std::filesystem::copy_options::overwrite_existing);
  const auto before = std::filesystem::file_size(copy);
  const RunResult same = run_luong("average -o " + copy + " " + a_ + " " + copy);
  EXPECT_EQ(same.status, 1) << same.output;
  EXPECT_TRUE(has(same, "is the input checkpoint")) << same.output;
  // The same file under another name (a hard link) is refused too.
  const std::string link = dir_ + "/input_link.h5";
  std::filesystem::remove(link);
  std::filesystem::create_hard_link(copy, link);
  const RunResult linked = run_luong("average -o " + link + " " + a_ + " " + copy);
  EXPECT_EQ(linked.status, 1) << linked.output;
  EXPECT_TRUE(has(linked, "is the input checkpoint")) << linked.output;
  EXPECT_EQ(std::filesystem::file_size(copy), before);
  EXPECT_EQ(load_checkpoint(copy).state.tensors.size(), load_checkpoint(b_).state.tensors.size());
}

// --- standard output and input ---------------------------------------------------------------------------

TEST_F(CliInputChecks, WriteErrorsOnStandardOutputFail) {
  for (const std::string& cmd : {"LUONG translate --checkpoint " + ckpt_ + " < " + src_,
                                 "LUONG bleu " + ref_ + " < " + ref_,
                                 "LUONG eval --checkpoint " + ckpt_ + " --src " + src_ + " --ref " + ref_}) {
    const RunResult r = sh(cmd + " 2>&1 >/dev/full");
    EXPECT_EQ(r.status, 1) << cmd << "\n" << r.output;
    EXPECT_TRUE(has(r, "cannot write to standard output: No space left on device")) << cmd << "\n" << r.output;
  }
}

TEST_F(CliInputChecks, UnreadableStandardInputIsAnError) {
  const RunResult t = sh("LUONG translate --checkpoint " + ckpt_ + " < " + dir_ + " 2>&1");
  EXPECT_EQ(t.status, 1) << t.output;
  EXPECT_TRUE(has(t, "standard input cannot be read: Is a directory")) << t.output;
  const RunResult b = sh("LUONG bleu " + ref_ + " < " + dir_ + " 2>&1");
  EXPECT_EQ(b.status, 1) << b.output;
  EXPECT_TRUE(has(b, "standard input cannot be read: Is a directory")) << b.output;
}

TEST_F(CliInputChecks, BleuNamesAReferenceThatIsADirectory) {
  const RunResult r = sh("LUONG bleu " + dir_ + " < " + ref_ + " 2>&1");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "reference file " + dir_ + ": it is a directory")) << r.output;
}

// --- text contents ---------------------------------------------------------------------------------------

TEST_F(CliInputChecks, EmptyLinesTranslateToEmptyLines) {
  const std::string in = dir_ + "/with_blanks.src";
  std::ifstream src(src_);
  std::string first;
  std::getline(src, first);
  write_file(in, first + "\n\n   \t \n" + first + "\n");
  const RunResult r = sh("LUONG translate --checkpoint " + ckpt_ + " < " + in + " 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<std::string> lines;
  std::istringstream out(r.output);
  for (std::string l; std::getline(out, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 4u) << r.output;
  EXPECT_FALSE(lines[0].empty());
  EXPECT_EQ(lines[1], "");
  EXPECT_EQ(lines[2], "");
  EXPECT_EQ(lines[3], lines[0]);
  // n-best output keeps exactly one empty entry for them (decoding a lone </s> gave the model's guesses,
  // e.g. "1 ||| . ||| -3.61", next to the empty one).
  const RunResult nbest = sh("LUONG translate --checkpoint " + ckpt_ + " --beam 2 --n-best 2 < " + in + " 2>/dev/null");
  ASSERT_EQ(nbest.status, 0) << nbest.output;
  std::vector<std::string> blank_entries;
  std::istringstream nb(nbest.output);
  for (std::string l; std::getline(nb, l);)
    if (l.rfind("1 ||| ", 0) == 0 || l.rfind("2 ||| ", 0) == 0) blank_entries.push_back(l);
  EXPECT_EQ(blank_entries, (std::vector<std::string>{"1 |||  ||| 0", "2 |||  ||| 0"})) << nbest.output;
  EXPECT_TRUE(has(nbest, "3 ||| ")) << nbest.output;
}

TEST_F(CliInputChecks, NulBytesAreRejectedNamingFileLineAndByte) {
  const std::string nul = dir_ + "/nul.txt";
  write_file(nul, std::string("alpha bravo\nchar") + '\0' + "lie\n");
  const RunResult t = sh("LUONG translate --checkpoint " + ckpt_ + " < " + nul + " 2>&1");
  EXPECT_EQ(t.status, 1) << t.output;
  EXPECT_TRUE(has(t, "standard input line 2: NUL byte at byte 4")) << t.output;
  const RunResult hyp = sh("LUONG bleu " + ref_ + " < " + nul + " 2>&1");
  EXPECT_EQ(hyp.status, 1) << hyp.output;
  EXPECT_TRUE(has(hyp, "standard input line 2: NUL byte at byte 4")) << hyp.output;
  const RunResult ref = sh("LUONG bleu " + nul + " < " + ref_ + " 2>&1");
  EXPECT_EQ(ref.status, 1) << ref.output;
  EXPECT_TRUE(has(ref, nul + " line 2: NUL byte at byte 4")) << ref.output;
  // eval reads its files with the same reader: the file is named.
  const std::string six_lines = dir_ + "/nul6.txt";
  write_file(six_lines, std::string("a\nb\nc\nd\ne") + '\0' + "\nf\n");
  const RunResult ev = run_luong("eval --checkpoint " + ckpt_ + " --src " + src_ + " --ref " + six_lines);
  EXPECT_EQ(ev.status, 1) << ev.output;
  EXPECT_TRUE(has(ev, "file '" + six_lines + "' line 5: NUL byte at byte 1")) << ev.output;
}

TEST_F(CliInputChecks, EvalOfAnEmptyTestSetIsAnError) {
  const std::string empty = dir_ + "/empty.txt";
  write_file(empty, "");
  const RunResult r = run_luong("eval --checkpoint " + ckpt_ + " --src " + empty + " --ref " + empty);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "test set " + empty + " is empty")) << r.output;
  EXPECT_FALSE(has(r, "perplexity")) << r.output;
}

// --- options -------------------------------------------------------------------------------------------

TEST_F(CliInputChecks, DecodingOptionsAreRangeChecked) {
  const std::string eval = "eval --checkpoint " + ckpt_ + " --src " + src_ + " --ref " + ref_;
  const std::string translate = "translate --checkpoint " + ckpt_ + " < " + src_;
  const std::pair<std::string, std::string> cases[] = {
      {"--beam 0", "--beam must be >= 1, got 0"},
      {"--beam 2147483647", "--beam must be at most 256, got 2147483647"},
      {"--length-penalty nan", "--length-penalty must be a finite number >= 0"},
      {"--length-penalty -1", "--length-penalty must be a finite number >= 0 (0 = no length normalisation), got -1"},
      {"--max-len-ratio -1", "--max-len-ratio must be a finite number >= 0.1, got -1"},
      {"--plot-count -5", "--plot-count must be >= 0, got -5"},
      {"--batch-size 0", "--batch-size must be >= 1, got 0"},
  };
  for (const auto& [option, message] : cases) {
    for (const std::string& cmd : {eval + " " + option, "translate " + option + translate.substr(9)}) {
      const RunResult r = run_luong(cmd);
      EXPECT_EQ(r.status, 1) << cmd << "\n" << r.output;
      EXPECT_TRUE(has(r, message)) << cmd << "\n" << r.output;
    }
  }
  const RunResult nbest = run_luong("translate --n-best 0 --checkpoint " + ckpt_ + " < " + src_);
  EXPECT_TRUE(has(nbest, "--n-best must be >= 1, got 0")) << nbest.output;
}

TEST_F(CliInputChecks, EvalDoesNotOfferTranslateOnlyOptions) {
  const RunResult r = run_luong("eval --n-best 3 --checkpoint " + ckpt_ + " --src " + src_ + " --ref " + ref_);
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "--n-best")) << r.output;
  EXPECT_FALSE(has(run_luong("eval --help"), "--n-best"));
  EXPECT_TRUE(has(run_luong("translate --help"), "--n-best"));
}

TEST_F(CliInputChecks, MistypedSubcommandIsNamed) {
  const RunResult r = run_luong("trian --config x.yaml");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "unknown subcommand 'trian'")) << r.output;
  EXPECT_TRUE(has(r, "train, translate")) << r.output;  // the valid ones, sorted
}

// One status for every command-line usage error (CLI11 alone would give 105, 106, 109, ...): 2.
TEST_F(CliInputChecks, UsageErrorsExitWithStatus2) {
  for (const char* args : {"eval --no-such-option", "train", "translate --beam", "bleu a b c"}) {
    const RunResult r = run_luong(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
  }
  EXPECT_EQ(run_luong("--help").status, 0);
  EXPECT_EQ(run_luong("train --help").status, 0);
}

TEST_F(CliInputChecks, InternalCheckDetailsOnlyWithLuongDebug) {
  const std::string args = "train --quiet --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml" +
                           " --set data.train_src= --run-dir " + dir_ + "/no_data";
  const RunResult plain = run_luong(args);
  EXPECT_EQ(plain.status, 1) << plain.output;
  EXPECT_TRUE(has(plain, "data.train_src and data.train_tgt must name the training files")) << plain.output;
  EXPECT_FALSE(has(plain, "failed at")) << plain.output;
  const RunResult debug = run_luong_shell("LUONG_DEBUG=1 " + std::string(LUONG_BINARY) + " " + args + " 2>&1");
  EXPECT_EQ(debug.status, 1) << debug.output;
  EXPECT_TRUE(has(debug, "failed at models/nmt/nmt_task.cpp:")) << debug.output;
}

TEST_F(CliInputChecks, ResumeFromADirectorySaysSo) {
  const RunResult r = run_luong("train --quiet --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml" +
                                " --run-dir " + dir_ + "/resume_dir --set data.train_src=" + src_ +
                                " --set data.train_tgt=" + ref_ + " --set data.valid_src=" + src_ +
                                " --set data.valid_tgt=" + ref_ + " --resume " + dir_ + "/run");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, dir_ + "/run is a directory")) << r.output;
}

// --- progress ------------------------------------------------------------------------------------------

TEST_F(CliInputChecks, EvalReportsProgressWhenAsked) {
  const std::string args = "eval --checkpoint " + ckpt_ + " --src " + src_ + " --ref " + ref_;
  const RunResult quiet = run_luong(args);  // stderr is a pipe here: no progress lines by default
  ASSERT_EQ(quiet.status, 0) << quiet.output;
  EXPECT_FALSE(has(quiet, "eval: perplexity")) << quiet.output;
  const RunResult r = run_luong(args + " --progress");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "eval: perplexity 0/6 sentences")) << r.output;
  EXPECT_TRUE(has(r, "eval: perplexity 6/6 sentences")) << r.output;
  EXPECT_TRUE(has(r, "eval: decoding 6/6 sentences")) << r.output;
}

}  // namespace
}  // namespace luong::testing
