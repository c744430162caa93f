// train.init_from: a run that starts from a trained checkpoint holds that checkpoint's parameters, vocabularies
// and subword units before its first step (bit for bit), trains on another corpus from there (its first loss is
// the trained model's, well below a fresh model's), resumes exactly from its own checkpoints (the starting one
// may be gone by then), may start from an averaged model, may build its own vocabularies and carry the
// checkpoint's entries to them by token (train.init_vocabulary = data), may draw named parts afresh
// (train.init_skip) or keep parts as they are while the rest trains (train.freeze), and refuses a checkpoint of another
// network or a file that is not one, naming every differing key or the file.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "framework/dist/process_group.h"
#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "framework/io/config.h"
#include "models/nmt/nmt_task.h"
#include "tests/support/model_diff.h"
#include "tests/support/run_luong.h"
#include "tests/support/temp_dir.h"

namespace luong::testing {
namespace {

// The parent's network (configs/tiny.yaml made smaller); a child must describe the same one.
const char* const kNetwork = " --set model.hidden_size=32 --set model.embedding_size=24";

class InitFromTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    parent_data_ = generated_corpus("init_from_parent_data", "--train 400 --valid 30 --test 10");
    // The same toy language drawn with another seed: other sentences, the same words.
    child_data_ = generated_corpus("init_from_child_data", "--train 300 --valid 30 --test 10 --seed 7");
    parent_ = fresh_dir("init_from_parent");
    const RunResult r = run_luong(tiny_train_command(parent_, parent_data_) + kNetwork +
                                  " --quiet --set data.bpe_merges=30 --set train.max_epochs=0 --set train.max_steps=150"
                                  " --set train.valid_every=10 --set train.checkpoint_every=10"
                                  " --set train.keep_checkpoints=2");
    ASSERT_EQ(r.status, 0) << r.output;
  }
  static std::string parent_checkpoint() { return checkpoint_path(parent_, 150); }
  // A child run on the other corpus; `extra` adds options (train.init_from among them).
  static std::string child_command(const std::string& run_dir, const std::string& extra) {
    return tiny_train_command(run_dir, child_data_) + kNetwork + " --set train.max_epochs=0 " + extra;
  }
  // The child's config for tasks built in the test's process: the parent's network on the child's corpus,
  // without validation, then `extra` ("key=value").
  static Config child_config(const std::vector<std::string>& extra) {
    Config config = Config::load_file(nmt::nmt_schema(), std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml");
    std::vector<std::string> sets{"model.hidden_size=32",
                                  "model.embedding_size=24",
                                  "data.train_src=" + child_data_ + "/train.src",
                                  "data.train_tgt=" + child_data_ + "/train.tgt",
                                  "data.valid_src=",
                                  "data.valid_tgt="};
    sets.insert(sets.end(), extra.begin(), extra.end());
    for (const std::string& set : sets) config.set(set);
    return config;
  }
  // The loss of the first "train" record of a run's metrics.jsonl.
  static double first_train_loss(const std::string& run_dir) {
    std::ifstream in(run_dir + "/metrics.jsonl");
    for (std::string line; std::getline(in, line);) {
      const nlohmann::json j = nlohmann::json::parse(line);
      if (j.at("type") == "train") return j.at("loss");
    }
    ADD_FAILURE() << "no train record in " << run_dir;
    return 0;
  }
  static std::string parent_data_, child_data_, parent_;
};
std::string InitFromTest::parent_data_, InitFromTest::child_data_, InitFromTest::parent_;

TEST_F(InitFromTest, TheNewModelHoldsTheCheckpointsParametersVocabulariesAndSubwordUnits) {
  const Config config = child_config({});
  const nmt::NmtConfig cfg = nmt::nmt_config_from(config);
  auto group = make_process_group("auto", Device::cpu());
  const auto quiet = [](const std::string&) {};
  nmt::NmtTask started(cfg, *group, quiet, nmt::read_starting_point(parent_checkpoint(), config.dump(), false));
  nmt::NmtTask fresh(cfg, *group, quiet);

  const Checkpoint parent = load_checkpoint(parent_checkpoint());
  expect_bitwise_equal(parent.state.sub("model"), nmt::model_tensors(started.model()).sub("model"));

  EXPECT_EQ(started.src_vocab().to_tokens(), split_string_list(parent.state.strings.at("vocab/src")));
  EXPECT_EQ(started.tgt_vocab().to_tokens(), split_string_list(parent.state.strings.at("vocab/tgt")));
  ASSERT_TRUE(started.subwords().any());
  EXPECT_TRUE(nmt::same_subwords(started.subwords(), nmt::Subwords::load(parent.state.strings, parent.path)));
  EXPECT_FALSE(fresh.subwords().any());  // the config learns none: the units came from the checkpoint
}

// train.init_vocabulary = data: the run's vocabularies and units are built from its data exactly as a fresh
// run's; tokens both vocabularies hold take the checkpoint's embedding rows, output columns and biases, new
// ones keep the fresh run's draws, and every other parameter is the checkpoint's. data.lowercase may differ.
TEST_F(InitFromTest, OwnVocabulariesCarryTheEntriesOfTheTokensBothHoldAndDrawTheRest) {
  // 40 merges learned on the child's corpus: mostly the parent's 30 units, and some it does not have.
  const Config config = child_config({"data.bpe_merges=40", "data.lowercase=true",
                                      "train.init_from=" + parent_checkpoint(), "train.init_vocabulary=data"});
  const nmt::NmtConfig cfg = nmt::nmt_config_from(config);
  auto group = make_process_group("auto", Device::cpu());
  const auto quiet = [](const std::string&) {};
  nmt::NmtTask started(cfg, *group, quiet, nmt::read_starting_point(parent_checkpoint(), config.dump(), true));
  nmt::NmtTask fresh(cfg, *group, quiet);
  ASSERT_EQ(started.src_vocab().to_tokens(), fresh.src_vocab().to_tokens());
  ASSERT_EQ(started.tgt_vocab().to_tokens(), fresh.tgt_vocab().to_tokens());
  EXPECT_TRUE(nmt::same_subwords(started.subwords(), fresh.subwords()));

  const Checkpoint parent = load_checkpoint(parent_checkpoint());
  const nmt::Vocabulary parent_src =
      nmt::Vocabulary::from_tokens(split_string_list(parent.state.strings.at("vocab/src")));
  const nmt::Vocabulary parent_tgt =
      nmt::Vocabulary::from_tokens(split_string_list(parent.state.strings.at("vocab/tgt")));
  const StateDict drawn = nmt::model_tensors(fresh.model()), now = nmt::model_tensors(started.model());
  const auto axes = started.model().vocabulary_axes();
  int64_t carried = 0, new_tokens = 0;
  for (const auto& [name, v] : started.model().named_parameters()) {
    const std::string key = nmt::checkpoint_name(name);
    const auto axis = axes.find(name);
    if (axis == axes.end()) {
      EXPECT_EQ(now.tensors.at(key).to_vector(), parent.state.tensors.at(key).to_vector()) << name;
      continue;
    }
    const nmt::Vocabulary& mine = axis->second.target ? started.tgt_vocab() : started.src_vocab();
    const nmt::Vocabulary& theirs = axis->second.target ? parent_tgt : parent_src;
    for (int64_t id = 0; id < mine.size(); ++id) {
      const bool held = theirs.contains(mine.token(id));
      (held ? carried : new_tokens) += 1;
      const std::vector<double> expected =
          held ? entry_along(parent.state.tensors.at(key), axis->second.axis, theirs.id(mine.token(id)))
               : entry_along(drawn.tensors.at(key), axis->second.axis, id);
      ASSERT_EQ(entry_along(now.tensors.at(key), axis->second.axis, id), expected) << name << " " << mine.token(id);
    }
  }
  // Both kinds of entry were compared, on real differences between the vocabularies.
  EXPECT_GT(carried, 0);
  EXPECT_GT(new_tokens, 0);
}

// train.init_skip: the parts it names keep the draws a fresh run makes, the rest comes from the checkpoint.
TEST_F(InitFromTest, SkippedPartsKeepAFreshRunsDraws) {
  const Config config = child_config({"data.bpe_merges=40", "train.init_from=" + parent_checkpoint(),
                                      "train.init_vocabulary=data", "train.init_skip=decoder.output, encoder.lstm"});
  const nmt::NmtConfig cfg = nmt::nmt_config_from(config);
  auto group = make_process_group("auto", Device::cpu());
  std::vector<std::string> said;
  const auto keep = [&](const std::string& line) { said.push_back(line); };
  nmt::NmtTask started(cfg, *group, keep, nmt::read_starting_point(parent_checkpoint(), config.dump(), true));
  nmt::NmtTask fresh(cfg, *group, [](const std::string&) {});
  const Checkpoint parent = load_checkpoint(parent_checkpoint());
  const StateDict drawn = nmt::model_tensors(fresh.model()), now = nmt::model_tensors(started.model());
  const auto axes = started.model().vocabulary_axes();
  int skipped = 0;
  for (const auto& [name, v] : started.model().named_parameters()) {
    const std::string key = nmt::checkpoint_name(name);
    if (name.rfind("decoder.output.", 0) == 0 || name.rfind("encoder.lstm.", 0) == 0) {
      EXPECT_EQ(now.tensors.at(key).to_vector(), drawn.tensors.at(key).to_vector()) << name;
      ++skipped;
    } else if (!axes.contains(name)) {
      EXPECT_EQ(now.tensors.at(key).to_vector(), parent.state.tensors.at(key).to_vector()) << name;
    }
  }
  EXPECT_EQ(skipped, 5);  // the output weight and bias, one encoder layer's three
  bool reported = false;
  for (const std::string& line : said)
    reported = reported || line.find("; 5 parameter(s) under decoder.output, encoder.lstm (") != std::string::npos;
  EXPECT_TRUE(reported);
}

TEST_F(InitFromTest, TrainsOnAnotherCorpusFromTheTrainedModel) {
  const std::string child = fresh_dir("init_from_child"), scratch = fresh_dir("init_from_scratch");
  const std::string steps =
      " --set train.max_steps=6 --set train.log_every=1 --set data.valid_src= --set data.valid_tgt=";
  const RunResult r = run_luong(child_command(child, "--set train.init_from=" + parent_checkpoint() + steps));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find(
                "init: parameters, vocabularies and 30 BPE merges from " + parent_checkpoint() +
                " (step 150 of its run); a new optimizer state, schedule, step count and data position (a resumed run "
                "continues its own)"),
            std::string::npos)
      << r.output;
  // The config asks for whole words; the parent's merges are used instead, which is worth a warning.
  EXPECT_NE(r.output.find("warning: train.init_from: the checkpoint's vocabularies and subword units are used, so "
                          "this setting has no effect (data.bpe_merges is 30 in its run, 0 here)"),
            std::string::npos)
      << r.output;
  const RunResult f = run_luong(child_command(scratch, "--set data.bpe_merges=30" + steps));
  ASSERT_EQ(f.status, 0) << f.output;
  EXPECT_EQ(f.output.find("init:"), std::string::npos);

  // The step count starts at zero, and the run directory carries the parent's merges and vocabularies (their
  // tokens: the counts are of the corpus a vocabulary was built from, which the child did not do).
  EXPECT_TRUE(std::filesystem::exists(checkpoint_path(child, 6)));
  EXPECT_EQ(read_bytes(child + "/bpe.merges.txt"), read_bytes(parent_ + "/bpe.merges.txt"));
  for (const char* file : {"vocab.src.txt", "vocab.tgt.txt"})
    EXPECT_EQ(nmt::Vocabulary::load(child + "/" + file).to_tokens(),
              nmt::Vocabulary::load(parent_ + "/" + file).to_tokens())
        << file;
  // 60 steps of training on the same toy language: the child's first step already sees a trained model.
  const double started = first_train_loss(child), fresh = first_train_loss(scratch);
  EXPECT_LT(started, fresh - 0.5) << "first loss from the checkpoint " << started << ", from scratch " << fresh;
}

TEST_F(InitFromTest, ResumesExactlyFromItsOwnCheckpointsOnceTheStartingOneIsGone) {
  // Dropout the parent did not have (it may differ) and Adam's state, so the resume has something to keep.
  const std::string common = " --set model.dropout=0.3 --set train.checkpoint_every=5 --set train.valid_every=5";
  const std::string straight = fresh_dir("init_from_straight"), stopped = fresh_dir("init_from_stopped");
  RunResult r = run_luong(child_command(
      straight, " --set train.init_from=" + parent_checkpoint() + common + " --quiet --set train.max_steps=20"));
  ASSERT_EQ(r.status, 0) << r.output;
  // The stopped run starts from a copy, deleted before the resume (a scratch file system cleaned meanwhile).
  const std::string copy = fresh_dir("init_from_copy") + "/parent.h5";
  std::filesystem::copy_file(parent_checkpoint(), copy);
  const std::string init = " --set train.init_from=" + copy;
  r = run_luong(child_command(stopped, init + common + " --quiet --set train.max_steps=10"));
  ASSERT_EQ(r.status, 0) << r.output;
  std::filesystem::remove(copy);
  // Without the key the run would read its text another way: refused, naming the key, before any step.
  r = run_luong(child_command(stopped, common + " --quiet --set train.max_steps=20 --resume auto"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("cannot resume from checkpoint " + checkpoint_path(stopped, 10) +
                          ": its run was started with train.init_from: " + copy +
                          " and reads its text with that "
                          "checkpoint's vocabularies and subword units, but this run's config has no train.init_from"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(checkpoint_path(stopped, 15)));
  r = run_luong(child_command(stopped, init + common + " --set train.max_steps=20 --resume auto"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("init: vocabularies and 30 BPE merges from " + checkpoint_path(stopped, 10) +
                          ", as its run took them from " + copy + " at its start (that file is not read again)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("warning: resuming with a changed config"), std::string::npos) << r.output;
  expect_bitwise_equal(load_checkpoint(checkpoint_path(straight, 20)).state.sub("model"),
                       load_checkpoint(checkpoint_path(stopped, 20)).state.sub("model"));
}

TEST_F(InitFromTest, OwnVocabulariesTrainAndResumeExactlyWithoutTheKeyOrTheStartingFile) {
  const std::string common =
      " --set model.dropout=0.3 --set train.checkpoint_every=5 --set train.valid_every=5"
      " --set data.bpe_merges=40 --set train.init_vocabulary=data";
  const std::string straight = fresh_dir("own_vocab_straight"), stopped = fresh_dir("own_vocab_stopped");
  RunResult r = run_luong(
      child_command(straight, " --set train.init_from=" + parent_checkpoint() + common + " --set train.max_steps=10"));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string said = "init: parameters from " + parent_checkpoint() +
                           " (step 150 of its run); this run's vocabularies (40 BPE merges) take the embedding and "
                           "output entries of the tokens the checkpoint's hold: source ";
  const size_t at = r.output.find(said);
  ASSERT_NE(at, std::string::npos) << r.output;
  // "source N of M, target K of L": both counts within their vocabularies, some carried.
  int64_t n = 0, m = 0, k = 0, l = 0;
  ASSERT_EQ(std::sscanf(r.output.c_str() + at + said.size(), "%ld of %ld, target %ld of %ld", &n, &m, &k, &l), 4)
      << r.output;
  EXPECT_GT(n, nmt::Vocabulary::kNumSpecials);
  EXPECT_LE(n, m);
  EXPECT_GT(k, nmt::Vocabulary::kNumSpecials);
  EXPECT_LE(k, l);
  EXPECT_EQ(r.output.find("warning:"), std::string::npos) << r.output;
  // The run directory holds its own units (learned on its corpus), not the parent's.
  EXPECT_NE(read_bytes(straight + "/bpe.merges.txt"), read_bytes(parent_ + "/bpe.merges.txt"));

  const std::string copy = fresh_dir("own_vocab_copy") + "/parent.h5";
  std::filesystem::copy_file(parent_checkpoint(), copy);
  r = run_luong(child_command(stopped, " --set train.init_from=" + copy + common + " --quiet --set train.max_steps=5"));
  ASSERT_EQ(r.status, 0) << r.output;
  std::filesystem::remove(copy);
  // Its vocabularies come from the data, as a fresh run's do: the resume needs neither the file nor the key.
  r = run_luong(child_command(stopped, common + " --set train.max_steps=10 --resume auto"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("init:"), std::string::npos) << r.output;
  expect_bitwise_equal(load_checkpoint(checkpoint_path(straight, 10)).state.sub("model"),
                       load_checkpoint(checkpoint_path(stopped, 10)).state.sub("model"));
}

TEST_F(InitFromTest, OwnVocabulariesWithNearlyNothingInCommonAreWorthAWarning) {
  // The child translates the other way: its source words are the parent's target words, which the parent's
  // source vocabulary (syllables) lacks but for the period.
  const std::string run = fresh_dir("own_vocab_reversed");
  const std::string swapped = " --set data.train_src=" + child_data_ +
                              "/train.tgt --set data.train_tgt=" + child_data_ +
                              "/train.src --set data.valid_src= --set data.valid_tgt=";
  RunResult r =
      run_luong(child_command(run, "--set train.init_from=" + parent_checkpoint() +
                                       " --set train.init_vocabulary=data --set train.max_steps=1" + swapped));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("warning: train.init_vocabulary = data: 1 of this run's 17 source tokens (specials aside) "
                          "are in the checkpoint's vocabulary, so nearly every source embedding entry is new, drawn "
                          "by model.init (expected for another language; for the same one, are the subword units "
                          "alike?)"),
            std::string::npos)
      << r.output;
  // Without a starting checkpoint the key does nothing, which is worth a word too.
  r = run_luong(child_command(fresh_dir("own_vocab_alone"),
                              "--set train.init_vocabulary=data --set train.max_steps=1" + swapped));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("warning: train.init_vocabulary = data has no effect without train.init_from"),
            std::string::npos)
      << r.output;
}

// train.freeze: the frozen parts end as the checkpoint had them (weight decay on, which moves a parameter
// without a gradient), the rest trains, and a stopped run resumes to the same bits.
TEST_F(InitFromTest, FrozenPartsStayAsTheCheckpointHasThemAndResumeExactly) {
  const std::string common = " --set train.init_from=" + parent_checkpoint() +
                             " --set train.freeze=encoder,decoder.embedding --set optim.weight_decay=0.1"
                             " --set train.checkpoint_every=5 --set data.valid_src= --set data.valid_tgt=";
  const std::string straight = fresh_dir("freeze_straight"), stopped = fresh_dir("freeze_stopped");
  RunResult r = run_luong(child_command(straight, common + " --set train.max_steps=10"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("frozen: "), std::string::npos) << r.output;
  const StateDict parent = load_checkpoint(parent_checkpoint()).state.sub("model");
  const StateDict trained = load_checkpoint(checkpoint_path(straight, 10)).state.sub("model");
  int frozen = 0, moved = 0;
  for (const auto& [name, t] : trained.tensors) {
    const bool is_frozen = name.rfind("encoder/", 0) == 0 || name.rfind("decoder/embedding/", 0) == 0;
    const bool same = t.to_vector() == parent.tensors.at(name).to_vector();
    EXPECT_EQ(same, is_frozen) << name;
    (is_frozen ? frozen : moved) += 1;
  }
  EXPECT_GT(frozen, 2);
  EXPECT_GT(moved, 2);
  const std::string said = r.output.substr(r.output.find("frozen: "));
  int64_t kept = 0, all = 0;
  ASSERT_EQ(std::sscanf(said.c_str(), "frozen: %ld of the %ld parameter values", &kept, &all), 2) << said;
  int64_t expected = 0;
  for (const auto& [name, t] : parent.tensors)
    if (name.rfind("encoder/", 0) == 0 || name.rfind("decoder/embedding/", 0) == 0) expected += t.numel();
  EXPECT_EQ(kept, expected);

  r = run_luong(child_command(stopped, common + " --quiet --set train.max_steps=5"));
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_luong(child_command(stopped, common + " --quiet --set train.max_steps=10 --resume auto"));
  ASSERT_EQ(r.status, 0) << r.output;
  expect_bitwise_equal(trained, load_checkpoint(checkpoint_path(stopped, 10)).state.sub("model"));

  // With optim.ema_decay the checkpoint's model is the average: its frozen parts are still the checkpoint's.
  const std::string averaged = fresh_dir("freeze_ema");
  r = run_luong(child_command(averaged, common + " --quiet --set train.max_steps=5 --set optim.ema_decay=0.9"));
  ASSERT_EQ(r.status, 0) << r.output;
  const StateDict average = load_checkpoint(checkpoint_path(averaged, 5)).state.sub("model");
  for (const auto& [name, t] : average.tensors) {
    const bool is_frozen = name.rfind("encoder/", 0) == 0 || name.rfind("decoder/embedding/", 0) == 0;
    EXPECT_EQ(t.to_vector() == parent.tensors.at(name).to_vector(), is_frozen) << name;
  }

  r = run_luong(
      child_command(fresh_dir("freeze_all"), common + " --set train.freeze=encoder,decoder --set train.max_steps=3"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("luong: error: train.freeze: encoder,decoder covers every parameter of the model: nothing "
                          "would train"),
            std::string::npos)
      << r.output;
}

TEST_F(InitFromTest, AResumedRunContinuesAsItBeganWhateverTheConfigNowSays) {
  // Its checkpoints decide: a run started from scratch is not restarted from a checkpoint named on resume
  // (its parameters and vocabularies are its own); a warning says so.
  const std::string run = fresh_dir("init_from_added_later");
  const std::string common = " --set train.checkpoint_every=5 --set data.valid_src= --set data.valid_tgt=";
  RunResult r = run_luong(child_command(run, common + " --quiet --set train.max_steps=5"));
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_luong(child_command(
      run, common + " --set train.max_steps=10 --resume auto --set train.init_from=" + run + "/no-such-parent.h5"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("init:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("warning: train.init_from has no effect on this run: it resumes from " +
                          checkpoint_path(run, 5) + ", its own, and began without a starting checkpoint"),
            std::string::npos)
      << r.output;
  EXPECT_TRUE(std::filesystem::exists(checkpoint_path(run, 10)));
  // A checkpoint to resume that does not load is the error, not the starting checkpoint that is not there.
  std::ofstream(run + "/broken.h5") << "not a checkpoint";
  r = run_luong(child_command(run, common + " --set train.max_steps=15 --resume " + run + "/broken.h5" +
                                       " --set train.init_from=" + run + "/no-such-parent.h5"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("checkpoint " + run + "/broken.h5: not an HDF5 file"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("no-such-parent.h5 does not exist"), std::string::npos) << r.output;
}

TEST_F(InitFromTest, StartsFromAnAveragedModel) {
  const std::string averaged = fresh_dir("init_from_average") + "/avg.h5";
  RunResult r = run_luong("average -o " + averaged + " " + checkpoint_path(parent_, 140) + " " + parent_checkpoint());
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string child = fresh_dir("init_from_averaged_child");
  r = run_luong(child_command(child, "--set train.init_from=" + averaged + " --set train.max_steps=3"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("from " + averaged + " (an averaged model)"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(checkpoint_path(child, 3)));
}

TEST_F(InitFromTest, RefusesAnotherNetworkNamingEveryKeyThatDiffers) {
  const std::string child = fresh_dir("init_from_other_network");
  const RunResult r = run_luong(
      child_command(child, "--set train.init_from=" + parent_checkpoint() +
                               " --set model.hidden_size=48 --set model.attention=dot --set data.lowercase=true"
                               " --set model.init_range=0.05 --set train.max_steps=3"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("luong: error: train.init_from: checkpoint " + parent_checkpoint() +
                          " holds another model than this config describes (data.lowercase is false in its run, true "
                          "here; model.attention is general in its run, dot here; model.hidden_size is 32 in its run, "
                          "48 here): set these keys as its run did"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("init_range is"), std::string::npos) << r.output;  // free to differ
  EXPECT_FALSE(std::filesystem::exists(child + "/config.yaml"));             // nothing written for a refused start
}

TEST_F(InitFromTest, ASkippedNameThatIsNoPartOfTheModelIsRefusedBeforeAnyStep) {
  const std::string child = fresh_dir("init_from_bad_skip");
  const RunResult r =
      run_luong(child_command(child, "--set train.init_from=" + parent_checkpoint() +
                                         " --set train.init_skip=decoder.outptu --set train.max_steps=3"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("luong: error: train.init_skip: 'decoder.outptu' names no part of this model; did you mean "
                          "'decoder.output'?"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(checkpoint_path(child, 3)));
}

TEST_F(InitFromTest, AMissingFileADirectoryOrAForeignFileIsNamed) {
  const std::string dir = fresh_dir("init_from_bad_inputs");
  const std::string text = dir + "/notes.txt";
  std::ofstream(text) << "not a checkpoint\n";
  for (const auto& [path, expected] :
       {std::pair{dir + "/none.h5", "train.init_from: " + dir + "/none.h5 does not exist"},
        std::pair{dir, "train.init_from: " + dir + " is a directory (name a checkpoint file in it)"},
        std::pair{text, "train.init_from: checkpoint " + text + ": not an HDF5 file"}}) {
    const RunResult r =
        run_luong(child_command(dir + "/run", "--set train.init_from=" + path + " --set train.max_steps=3"));
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("luong: error: " + expected), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace luong::testing
