// The command line's checks on what users hand it: checkpoints to average, decoding options, text with NUL
// bytes or read from a directory, empty lines and test sets, failed writes to standard output, mistyped
// subcommands, and messages that show luong's internals only under LUONG_DEBUG.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "tests/support/error_of.h"
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
  // Training-time dropout changes neither the parameters' meaning nor decoding: averaged all the same.
  const std::string dropped = dir_ + "/other_dropout.h5";
  copy_with_string(b_, dropped, "config", [](std::string cfg) {
    const size_t at = cfg.find("dropout: ");
    EXPECT_NE(at, std::string::npos) << cfg;
    return at == std::string::npos ? cfg : cfg.replace(at, cfg.find('\n', at) - at, "dropout: 0.45");
  });
  const RunResult d = run_luong("average -o " + dir_ + "/avg_dropout.h5 " + a_ + " " + dropped);
  EXPECT_EQ(d.status, 0) << d.output;
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
  const RunResult linked = run_luong("average --force -o " + link + " " + a_ + " " + copy);
  EXPECT_EQ(linked.status, 1) << linked.output;
  EXPECT_TRUE(has(linked, "--output " + link + " is the same file as input " + copy)) << linked.output;
  EXPECT_EQ(std::filesystem::file_size(copy), before);
  EXPECT_EQ(load_checkpoint(copy).state.tensors.size(), load_checkpoint(b_).state.tensors.size());
}

// --force replaces a checkpoint file, never a device or a FIFO (as root, `-o /dev/null` replaced /dev/null);
// save_checkpoint itself refuses too.
TEST_F(CliInputChecks, AverageNeverReplacesAFileThatIsNotRegular) {
  const std::string fifo = dir_ + "/a_fifo";
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const RunResult r = run_luong("average --force -o " + fifo + " " + a_ + " " + b_);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "--output " + fifo + " exists and is not a regular file")) << r.output;
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  const std::string msg = error_of([&] { save_checkpoint(fifo, load_checkpoint(a_).state); });
  EXPECT_NE(msg.find("checkpoint " + fifo + " exists and is not a regular file"), std::string::npos) << msg;
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
}

TEST_F(CliInputChecks, AverageRefusesAnExistingOutputUnlessForced) {
  // Another run's checkpoint, not an input: it must survive a mistyped -o.
  const std::string other = dir_ + "/other_best.h5";
  std::filesystem::copy_file(ckpt_, other, std::filesystem::copy_options::overwrite_existing);
  const auto before = load_checkpoint(other).state.tensors.size();
  const RunResult r = run_luong("average -o " + other + " " + a_ + " " + b_);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "--output " + other + " exists; pass --force to replace it")) << r.output;
  EXPECT_EQ(load_checkpoint(other).state.tensors.size(), before);
  const RunResult forced = run_luong("average --force -o " + other + " " + a_ + " " + b_);
  EXPECT_EQ(forced.status, 0) << forced.output;
}

TEST_F(CliInputChecks, AverageRefusesTheSameInputTwice) {
  const std::string link = dir_ + "/a_link.h5";
  std::filesystem::remove(link);
  std::filesystem::create_hard_link(a_, link);
  for (const std::string& second : {a_, link}) {
    const RunResult r = run_luong("average -o " + dir_ + "/avg_twice.h5 " + a_ + " " + second);
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_TRUE(has(r, "input " + second + " is the same file as input " + a_)) << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/avg_twice.h5"));
}

// The average is a model: no optimizer moments, trainer counters or data position of one member, but the
// first input's root metadata; resuming training from it is refused with a message that says why.
TEST_F(CliInputChecks, AverageWritesAModelWithoutTrainingState) {
  const std::string out = dir_ + "/avg_model.h5";
  std::filesystem::remove(out);
  const RunResult r = run_luong("average -o " + out + " " + a_ + " " + b_);
  ASSERT_EQ(r.status, 0) << r.output;
  const Checkpoint avg = load_checkpoint(out), first = load_checkpoint(a_);
  for (const auto& [name, t] : avg.state.tensors) EXPECT_EQ(name.rfind("model/", 0), 0u) << name;
  for (const auto& [name, v] : avg.state.ints) ADD_FAILURE() << "unexpected entry " << name;
  for (const auto& [name, v] : avg.state.floats) ADD_FAILURE() << "unexpected entry " << name;
  EXPECT_TRUE(avg.state.strings.count("config"));
  EXPECT_TRUE(avg.state.strings.count("vocab/tgt"));
  for (const auto& [key, value] : first.metadata) {
    if (key == "created" || key == "luong_version") continue;
    EXPECT_EQ(avg.metadata.count(key) ? avg.metadata.at(key) : "(missing)", value) << key;
  }
  EXPECT_EQ(avg.metadata.at("averaged_from"), a_ + "," + b_);
  EXPECT_EQ(run_luong("translate --checkpoint " + out + " < " + src_).status, 0);
  const std::string d = dir_ + "/data/";
  const RunResult resume = run_luong(
      "train --quiet --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml --run-dir " + dir_ +
      "/resume_avg --set data.train_src=" + d + "train.src --set data.train_tgt=" + d + "train.tgt" +
      " --set data.valid_src=" + d + "valid.src --set data.valid_tgt=" + d + "valid.tgt --set model.hidden_size=32" +
      " --set model.embedding_size=32 --resume " + out);
  EXPECT_EQ(resume.status, 1) << resume.output;
  EXPECT_TRUE(has(resume, "cannot resume from " + out)) << resume.output;
  EXPECT_TRUE(has(resume, "averaged")) << resume.output;
}

TEST_F(CliInputChecks, AverageRefusesNonFiniteParameters) {
  const std::string bad = dir_ + "/nan_param.h5";
  Checkpoint c = load_checkpoint(b_);
  c.state.tensors.at("model/decoder/output/bias").data<float>()[1] = std::numeric_limits<float>::infinity();
  save_checkpoint(bad, c.state, c.metadata.count("dtype") ? std::map<std::string, std::string>{
                                                                {"dtype", c.metadata.at("dtype")}}
                                                          : std::map<std::string, std::string>{});
  const RunResult r = run_luong("average -o " + dir_ + "/avg_nan.h5 " + a_ + " " + bad);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "parameter 'model/decoder/output/bias' in " + bad + " has a non-finite value (inf at element 1)"))
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/avg_nan.h5"));
}

// --- luong dump-step -------------------------------------------------------------------------------------

TEST_F(CliInputChecks, DumpStepRefusesAnExistingOutputAndAMissingDirectory) {
  const std::string d = dir_ + "/data/";
  const std::string args = "dump-step --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml" +
                           " --set data.train_src=" + d + "train.src --set data.train_tgt=" + d + "train.tgt" +
                           " --set data.valid_src=" + d + "valid.src --set data.valid_tgt=" + d + "valid.tgt --batch 4";
  const std::string other = dir_ + "/dump_other.h5";
  std::filesystem::copy_file(ckpt_, other, std::filesystem::copy_options::overwrite_existing);
  const RunResult r = run_luong(args + " -o " + other);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "--out " + other + " exists; pass --force to replace it")) << r.output;
  EXPECT_TRUE(load_checkpoint(other).state.strings.count("vocab/tgt"));  // still the training checkpoint
  const RunResult forced = run_luong(args + " --force -o " + other);
  EXPECT_EQ(forced.status, 0) << forced.output;
  EXPECT_TRUE(load_checkpoint(other).state.tensors.count("batch/src"));
  // The step is exact float32 (or float64) arithmetic on the CPU: a config saying otherwise would be
  // recorded in the file and mislead the reference that reads it.
  const RunResult bf16 = run_luong(args + " --force -o " + other + " --set train.precision=bf16");
  EXPECT_EQ(bf16.status, 1) << bf16.output;
  EXPECT_TRUE(has(bf16, "train.precision must be fp32")) << bf16.output;
  const RunResult cuda = run_luong(args + " --force -o " + other + " --set device=cuda");
  EXPECT_EQ(cuda.status, 1) << cuda.output;
  EXPECT_TRUE(has(cuda, "device must be cpu")) << cuda.output;
  std::string no_batch = args;
  no_batch.replace(no_batch.find(" --batch 4"), 10, " --batch 0");
  const RunResult zero = run_luong(no_batch + " --force -o " + other);
  EXPECT_TRUE(has(zero, "--batch must be >= 1, got 0")) << zero.output;
  const std::string missing = dir_ + "/no_such_dir/sub";
  const RunResult nodir = run_luong(args + " -o " + missing + "/step.h5");
  EXPECT_EQ(nodir.status, 1) << nodir.output;
  EXPECT_TRUE(has(nodir, "the directory " + missing + " of --out " + missing + "/step.h5 does not exist"))
      << nodir.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/no_such_dir"));
}

// --- decoding ------------------------------------------------------------------------------------------

// A model that ranks <s> first (a weakly trained one can): the 1-best text showed a literal "<s>" while
// the n-best formatter dropped it. The decoders never produce <s> or <pad>.
TEST_F(CliInputChecks, TranslationsNeverContainBosOrPad) {
  const std::string bos_first = dir_ + "/bos_first.h5";
  Checkpoint c = load_checkpoint(ckpt_);
  float* bias = c.state.tensors.at("model/decoder/output/bias").data<float>();
  bias[0] = 40.0f;  // <pad>
  bias[2] = 50.0f;  // <s>
  save_checkpoint(bos_first, c.state);
  for (const std::string opts : {"--beam 1", "--beam 3", "--beam 3 --n-best 3"}) {
    const RunResult r = sh("LUONG translate --checkpoint " + bos_first + " " + opts + " < " + src_ + " 2>&1");
    EXPECT_EQ(r.status, 0) << opts << "\n" << r.output;
    EXPECT_FALSE(has(r, "<s>")) << opts << "\n" << r.output;
    EXPECT_FALSE(has(r, "<pad>")) << opts << "\n" << r.output;
  }
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
      {"--max-len-ratio -1", "--max-len-ratio must be a finite number from 0.1 to 100, got -1"},
      // 1e19 * the source length overflowed the integer limit: output cut to one word.
      {"--max-len-ratio 1e19", "--max-len-ratio must be a finite number from 0.1 to 100, got 1e+19"},
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
  // Beam search keeps --beam hypotheses: 9 of 3 printed 3 per sentence without a word.
  const RunResult wide = run_luong("translate --n-best 9 --beam 3 --checkpoint " + ckpt_ + " < " + src_);
  EXPECT_EQ(wide.status, 1) << wide.output;
  EXPECT_TRUE(has(wide, "--n-best must be at most --beam (3), got 9")) << wide.output;
  EXPECT_FALSE(has(wide, " ||| ")) << wide.output;
  EXPECT_EQ(run_luong("translate --n-best 3 --beam 3 --checkpoint " + ckpt_ + " < " + src_).status, 0);
  // --alignment: 'hard' or a weight in (0, 1]; checked before the checkpoint is read, nothing printed.
  for (const char* value : {"0", "1.5", "soft", "nan", "0.5x"}) {
    const RunResult r =
        run_luong("translate --alignment " + std::string(value) + " --checkpoint " + ckpt_ + " < " + src_);
    EXPECT_EQ(r.status, 1) << value << "\n" << r.output;
    EXPECT_TRUE(has(r, "--alignment must be 'hard' or a weight threshold greater than 0 and at most 1, got '" +
                           std::string(value) + "'"))
        << r.output;
    EXPECT_FALSE(has(r, " ||| ")) << r.output;
  }
  const RunResult empty = run_luong("translate --alignment '' --checkpoint " + ckpt_ + " < " + src_);
  EXPECT_EQ(empty.status, 2) << empty.output;
  EXPECT_TRUE(has(empty, "--alignment")) << empty.output;
}

TEST_F(CliInputChecks, DictionaryFilesAreChecked) {
  const std::string extra = dir_ + "/dict_extra.tsv", dup = dir_ + "/dict_dup.tsv", good = dir_ + "/dict_good.tsv";
  write_file(extra, "ba\tbravo\n\nko\tkilo\textra\n");
  write_file(dup, "ba\tbravo\nko\tkilo\nba\tbeta\n");
  write_file(good, "ba\tbravo\nko\tkilo\n");
  const std::string translate = "translate --checkpoint " + ckpt_ + " --unk-replace --dictionary ";
  const RunResult r1 = run_luong(translate + extra + " < " + src_);
  EXPECT_EQ(r1.status, 1) << r1.output;
  EXPECT_TRUE(has(r1, "dictionary " + extra + " line 3: expected two tab-separated columns")) << r1.output;
  const RunResult r2 = run_luong(translate + dup + " < " + src_);
  EXPECT_EQ(r2.status, 1) << r2.output;
  EXPECT_TRUE(has(r2, "dictionary " + dup + " line 3: source word 'ba' is already defined on line 1")) << r2.output;
  // A source word with whitespace could never match a token: it was accepted and silently did nothing.
  const std::string spaced = dir_ + "/dict_spaced.tsv";
  write_file(spaced, "ba\tbravo\nko \tkilo\n");
  const RunResult r3 = run_luong(translate + spaced + " < " + src_);
  EXPECT_EQ(r3.status, 1) << r3.output;
  EXPECT_TRUE(has(r3, "dictionary " + spaced + " line 2: source word 'ko ' contains whitespace")) << r3.output;
  EXPECT_EQ(run_luong(translate + good + " < " + src_).status, 0);
  // Without --unk-replace the dictionary was read and silently unused.
  for (const std::string& cmd : {"translate --checkpoint " + ckpt_ + " --dictionary " + good + " < " + src_,
                                 "eval --checkpoint " + ckpt_ + " --src " + src_ + " --ref " + ref_ +
                                     " --dictionary " + good}) {
    const RunResult r = run_luong(cmd);
    EXPECT_EQ(r.status, 1) << cmd << "\n" << r.output;
    EXPECT_TRUE(has(r, "--dictionary needs --unk-replace")) << cmd << "\n" << r.output;
  }
}

// A plot path that is a file or cannot be created failed with a raw "filesystem error" only after every
// sentence was decoded and printed; now before the model is loaded, and nothing is printed.
TEST_F(CliInputChecks, AttentionPlotPathIsCheckedBeforeDecoding) {
  const std::string file = dir_ + "/plot_is_a_file";
  write_file(file, "x\n");
  const std::string eval = "eval --checkpoint " + ckpt_ + " --src " + src_ + " --ref " + ref_;
  const std::string translate = "translate --checkpoint " + ckpt_ + " < " + src_;
  for (const std::string& cmd : {translate + " --attention-plot " + file, eval + " --attention-plot " + file}) {
    const RunResult r = sh("LUONG " + cmd + " 2>&1");
    EXPECT_EQ(r.status, 1) << cmd << "\n" << r.output;
    EXPECT_TRUE(has(r, "--attention-plot " + file + " exists and is not a directory")) << cmd << "\n" << r.output;
    EXPECT_FALSE(has(r, "filesystem error")) << r.output;
    EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << "one line, no translations:\n" << r.output;
  }
  const std::string below_file = file + "/plots";
  const RunResult r = sh("LUONG " + translate + " --attention-plot " + below_file + " 2>&1");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "--attention-plot " + below_file + ": cannot create the directory: Not a directory")) << r.output;
  EXPECT_FALSE(has(r, "filesystem error")) << r.output;
  // An empty name is a usage error, not silently no plots; an existing directory that refuses files is found
  // before decoding (checked where this process cannot write: not as root, which writes anywhere).
  const RunResult empty = sh("LUONG " + translate + " --attention-plot '' 2>&1");
  EXPECT_EQ(empty.status, 2) << empty.output;
  EXPECT_TRUE(has(empty, "--attention-plot: an empty directory name")) << empty.output;
  if (::geteuid() != 0) {
    const std::string locked = dir_ + "/plots_locked";
    std::filesystem::create_directories(locked);
    std::filesystem::permissions(locked, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    const RunResult refused = sh("LUONG " + translate + " --attention-plot " + locked + " 2>&1");
    EXPECT_EQ(refused.status, 1) << refused.output;
    EXPECT_TRUE(has(refused, "--attention-plot " + locked + ": cannot write there: Permission denied"))
        << refused.output;
    EXPECT_EQ(refused.output.find('\n'), refused.output.size() - 1) << "nothing decoded:\n" << refused.output;
  }
  const std::string plots = dir_ + "/plots/new";
  const RunResult ok = sh("LUONG " + translate + " --attention-plot " + plots + " --plot-count 2 2>&1");
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_TRUE(std::filesystem::exists(plots + "/2.png"));
  // A sentence of more than 300 tokens is not drawn (it made images 160,000 pixels wide): said, and the
  // other sentences are plotted.
  std::ifstream in(src_);
  std::string first, longer;
  std::getline(in, first);
  while (std::count(longer.begin(), longer.end(), ' ') < 320) longer += first + " ";
  const std::string two = dir_ + "/long_then_short.src";
  write_file(two, longer + "\n" + first + "\n");
  const std::string capped = dir_ + "/plots/capped";
  const RunResult big = sh("LUONG translate --checkpoint " + ckpt_ + " --max-len-ratio 0.1 --attention-plot " + capped +
                           " < " + two + " 2>&1");
  EXPECT_EQ(big.status, 0) << big.output;
  EXPECT_TRUE(has(big, "warning: no attention plot for sentence 1")) << big.output;
  EXPECT_FALSE(std::filesystem::exists(capped + "/1.png"));
  EXPECT_TRUE(std::filesystem::exists(capped + "/2.png"));
}

// Damaged vocabularies in a checkpoint: the loader's messages did not name the file or the entry.
TEST_F(CliInputChecks, DamagedVocabularyErrorsNameTheCheckpointAndEntry) {
  const std::string no_newline = dir_ + "/vocab_no_newline.h5", no_specials = dir_ + "/vocab_no_specials.h5";
  copy_with_string(ckpt_, no_newline, "vocab/tgt", [](std::string v) { return v.substr(0, v.size() - 1); });
  copy_with_string(ckpt_, no_specials, "vocab/tgt", [](std::string v) {
    std::vector<std::string> items = split_string_list(v);
    std::swap(items[0], items[1]);
    return join_string_list(items);
  });
  for (const std::string& bad : {no_newline, no_specials}) {
    for (const std::string& cmd : {"translate --checkpoint " + bad + " < " + src_,
                                   "eval --checkpoint " + bad + " --src " + src_ + " --ref " + ref_}) {
      const RunResult r = run_luong(cmd);
      EXPECT_EQ(r.status, 1) << cmd << "\n" << r.output;
      EXPECT_TRUE(has(r, "checkpoint " + bad + ": 'vocab/tgt': ")) << cmd << "\n" << r.output;
    }
  }
  EXPECT_TRUE(has(run_luong("translate --checkpoint " + no_newline + " < " + src_), "does not end with a newline"));
}

TEST_F(CliInputChecks, EvalDoesNotOfferTranslateOnlyOptions) {
  const RunResult r = run_luong("eval --n-best 3 --checkpoint " + ckpt_ + " --src " + src_ + " --ref " + ref_);
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "unknown option '--n-best' for luong eval (an option of luong score, luong translate)")) << r.output;
  EXPECT_FALSE(has(run_luong("eval --help"), "--n-best"));
  EXPECT_TRUE(has(run_luong("translate --help"), "--n-best"));
}

TEST_F(CliInputChecks, MistypedSubcommandIsNamed) {
  const RunResult r = run_luong("trian --config x.yaml");
  EXPECT_EQ(r.status, 2) << r.output;  // a usage error, like an unknown option
  EXPECT_TRUE(has(r, "unknown subcommand 'trian'; did you mean 'train'?")) << r.output;
  EXPECT_TRUE(has(r, "train, translate")) << r.output;  // the valid ones, sorted
}

// CLI11 checks required options before unknown ones: `train --config c.yaml --chekpoint x` said "--run-dir is
// required", hiding the typo. The misspelt option is named first, with the closest valid one when near.
TEST_F(CliInputChecks, MistypedOptionIsNamedBeforeMissingOnes) {
  RunResult r = run_luong("eval --chekpoint " + ckpt_ + " --src " + src_ + " --ref " + ref_);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "luong: error: unknown option '--chekpoint' for luong eval; did you mean '--checkpoint'?"))
      << r.output;
  EXPECT_FALSE(has(r, "required")) << r.output;
  r = run_luong("train --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml --run-dirr=" + dir_ + "/x");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "unknown option '--run-dirr' for luong train; did you mean '--run-dir'?")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/x"));
  r = run_luong("sweep spec.yaml --qqqqqq");  // nothing near: no guess
  EXPECT_TRUE(has(r, "unknown option '--qqqqqq' for luong sweep (see luong sweep --help)")) << r.output;
  r = run_luong("--versoin");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "unknown option '--versoin' for luong; did you mean '--version'?")) << r.output;
  // After `--` words are arguments: CLI11 then reports the extra argument, in luong's form.
  r = run_luong("bleu " + ref_ + " -- --chekpoint");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_FALSE(has(r, "unknown option")) << r.output;
  EXPECT_TRUE(has(r, "luong: error: The following argument was not expected: --chekpoint (see luong bleu --help)"))
      << r.output;
  // CLI11's own errors read the same way.
  r = run_luong("translate");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "luong: error: --checkpoint is required (see luong translate --help)")) << r.output;
}

// One status for every command-line usage error (CLI11 alone would give 105, 106, 109, ...): 2.
TEST_F(CliInputChecks, UsageErrorsExitWithStatus2) {
  for (const char* args : {"eval --no-such-option", "train", "translate --beam", "bleu", "bleu -m ter ref.txt"}) {
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

// --- under an MPI launcher ------------------------------------------------------------------------------

// The launcher's environment stands in for mpirun here (what bootstrap reads): eval with 2 ranks would
// print two results, a sweep's trials would inherit the launcher. One rank of eval is fine, and so is train.
TEST_F(CliInputChecks, OnlyTrainRunsAsSeveralProcessesAndSweepUnderNoLauncher) {
  const std::string eval = "eval --checkpoint " + ckpt_ + " --src " + src_ + " --ref " + ref_ + " 2>&1";
  RunResult r = sh("OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 LUONG " + eval);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "luong: error: luong eval runs as one process, but the launcher started 2")) << r.output;
  EXPECT_FALSE(has(r, "BLEU")) << r.output;
  r = sh("PMI_SIZE=3 LUONG average -o " + dir_ + "/never.h5 " + ckpt_ + " " + ckpt_ + " 2>&1");
  EXPECT_TRUE(has(r, "luong average runs as one process, but the launcher started 3")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/never.h5"));
  r = sh("OMPI_COMM_WORLD_SIZE=1 LUONG sweep " + dir_ + "/no-such-spec.yaml --out " + dir_ + "/sw 2>&1");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "luong sweep was started by an MPI launcher")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/sw"));
  r = sh("OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_RANK=0 LUONG " + eval);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "BLEU")) << r.output;
  // train passes this check (it then needs a real launcher: MPI is initialised for it).
  r = sh("OMPI_COMM_WORLD_SIZE=2 LUONG train --help 2>&1");
  EXPECT_EQ(r.status, 0) << r.output;
}

// `srun -n 2` on a cluster whose Slurm has no MPI plugin configured: the tasks get SLURM_STEP_NUM_TASKS but no
// PMI, so each would initialise as a job of one and train alone into the same run directory. Refused before
// anything is written; one task, a PMI launcher under srun, the batch script (no step variable) and the
// explicit opt-out for independent jobs all run.
TEST_F(CliInputChecks, SrunWithoutMpiProcessManagementIsRefused) {
  const std::string run_dir = dir_ + "/srun_run";
  const std::string train = "train --quiet --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml" +
                            " --run-dir " + run_dir + " --set data.train_src=" + src_ +
                            " --set data.train_tgt=" + ref_ + " --set data.valid_src=" + src_ +
                            " --set data.valid_tgt=" + ref_ + " --set train.max_steps=2 2>&1";
  RunResult r = sh("SLURM_STEP_NUM_TASKS=2 SLURM_PROCID=1 LUONG " + train);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "luong: error: srun started 2 tasks without MPI process management")) << r.output;
  EXPECT_TRUE(has(r, "srun --mpi=pmix")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(run_dir));
  const std::string eval = "eval --checkpoint " + ckpt_ + " --src " + src_ + " --ref " + ref_ + " 2>&1";
  r = sh("SLURM_STEP_NUM_TASKS=4 LUONG " + eval);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "srun started 4 tasks without MPI process management")) << r.output;
  EXPECT_FALSE(has(r, "BLEU")) << r.output;
  for (const std::string env : {"SLURM_STEP_NUM_TASKS=1 SLURM_NTASKS=8", "SLURM_NTASKS=8 SLURM_PROCID=0",
                                "SLURM_STEP_NUM_TASKS=2 LUONG_INDEPENDENT_TASKS=1",
                                "SLURM_STEP_NUM_TASKS=2 PMIX_RANK=0 OMPI_COMM_WORLD_SIZE=1"}) {
    r = sh(env + " LUONG " + eval);
    EXPECT_EQ(r.status, 0) << env << ": " << r.output;
    EXPECT_TRUE(has(r, "BLEU")) << env << ": " << r.output;
  }
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
