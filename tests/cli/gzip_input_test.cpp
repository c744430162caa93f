// Compressed corpora end to end: training on .gz files trains the run that the plain files train, and eval,
// translate and bleu read gzip input as the text it holds.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "framework/io/checkpoint_dir.h"
#include "tests/data/test_files.h"
#include "tests/support/gzip_bytes.h"
#include "tests/support/model_diff.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

class GzipInputTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = generated_corpus("gzip_input_data", "--train 400 --valid 20 --test 10");
    for (const char* name : {"train.src", "train.tgt", "valid.src", "valid.tgt", "test.src", "test.tgt"})
      std::ofstream(data_ + "/" + name + ".gz", std::ios::binary) << gzip_bytes(read_bytes(data_ + "/" + name));
  }
  // tiny_train_command's files, compressed or not.
  static std::string train(const std::string& run, const std::string& suffix) {
    std::string cmd = "train --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml --run-dir " + run;
    for (const auto& [key, file] : {std::pair{"train_src", "train.src"}, std::pair{"train_tgt", "train.tgt"},
                                    std::pair{"valid_src", "valid.src"}, std::pair{"valid_tgt", "valid.tgt"}})
      cmd += std::string(" --set data.") + key + "=" + data_ + "/" + file + suffix;
    return cmd + " --quiet --set train.max_epochs=0 --set train.max_steps=30 --set train.valid_every=15";
  }
  static std::string data_;
};
std::string GzipInputTest::data_;

TEST_F(GzipInputTest, TrainingOnCompressedFilesEqualsTrainingOnTheText) {
  const std::string plain = fresh_dir("gzip_plain"), compressed = fresh_dir("gzip_compressed");
  const RunResult a = run_luong(train(plain, "")), b = run_luong(train(compressed, ".gz"));
  ASSERT_EQ(a.status, 0) << a.output;
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_EQ(max_rel_diff(checkpoint_path(plain, 30), checkpoint_path(compressed, 30)), 0.0);
  EXPECT_EQ(read_bytes(plain + "/vocab.tgt.txt"), read_bytes(compressed + "/vocab.tgt.txt"));

  // eval, translate and bleu on compressed input print what they print for the text.
  const std::string eval = "eval --checkpoint " + best_checkpoint_path(plain) + " --json --src " + data_ + "/test.src";
  const RunResult e1 = run_luong(eval + " --ref " + data_ + "/test.tgt 2>/dev/null");
  const RunResult e2 = run_luong(eval + ".gz --ref " + data_ + "/test.tgt.gz 2>/dev/null");
  ASSERT_EQ(e1.status, 0) << e1.output;
  ASSERT_EQ(e2.status, 0) << e2.output;
  const auto j1 = nlohmann::json::parse(e1.output), j2 = nlohmann::json::parse(e2.output);
  for (const char* key : {"ppl", "bleu", "chrf", "tokens", "sentences"}) EXPECT_EQ(j1[key], j2[key]) << key;
  const std::string translate = std::string(LUONG_BINARY) + " translate --checkpoint " + best_checkpoint_path(plain);
  const RunResult t1 = run_luong_shell(translate + " < " + data_ + "/test.src");
  const RunResult t2 = run_luong_shell(translate + " < " + data_ + "/test.src.gz");
  ASSERT_EQ(t1.status, 0) << t1.output;
  EXPECT_EQ(t1.output, t2.output);
  const std::string bleu = std::string(LUONG_BINARY) + " bleu ";
  const RunResult b1 = run_luong_shell(bleu + data_ + "/test.tgt < " + data_ + "/valid.tgt");
  const RunResult b2 = run_luong_shell(bleu + data_ + "/test.tgt.gz < " + data_ + "/valid.tgt.gz");
  EXPECT_EQ(b1.output, b2.output);
}

TEST_F(GzipInputTest, ATruncatedFileIsNamedAndNothingIsTrained) {
  const std::string gz = read_bytes(data_ + "/train.tgt.gz");
  const std::string cut = fresh_dir("gzip_cut") + "/train.tgt.gz";
  write_bytes(cut, gz.substr(0, gz.size() / 2));
  const std::string run = fresh_dir("gzip_cut_run");
  std::string cmd = train(run, ".gz");
  cmd.replace(cmd.find(data_ + "/train.tgt.gz"), (data_ + "/train.tgt.gz").size(), cut);
  const RunResult r = run_luong(cmd);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("file '" + cut + "' ends inside its gzip data after"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(checkpoint_path(run, 15)));
}

}  // namespace
}  // namespace luong::testing
