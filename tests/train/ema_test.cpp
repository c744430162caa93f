// optim.ema_decay on the NMT model through `luong train`: the average never changes the training steps (the
// parameters equal a run without one, bit for bit), a checkpoint's model is the average and is what the
// validation measured (luong eval on it gives the recorded perplexity), a stopped run resumes exactly, and a
// resume that drops or adds the average says so and continues from the training parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "tests/support/model_diff.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

class EmaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { data_ = generated_corpus("ema_data", "--train 300 --valid 30 --test 10"); }
  // A small model with dropout and Adam, validated and saved every 10 steps; `extra` adds options.
  static std::string train(const std::string& run_dir, int64_t steps, const std::string& extra) {
    return tiny_train_command(run_dir, data_) +
           " --set model.hidden_size=32 --set model.embedding_size=24 --set model.dropout=0.2"
           " --set train.batch_size=16 --set train.max_epochs=0 --set train.valid_every=10"
           " --set train.checkpoint_every=10 --set train.keep_checkpoints=0 --set train.max_steps=" +
           std::to_string(steps) + " " + extra;
  }
  // Resumes a copy of `checkpoint`, alone in `run_dir`, up to `steps` with `extra`; returns what it printed.
  static std::string resume_a_copy(const std::string& checkpoint, const std::string& run_dir, int64_t steps,
                                   const std::string& extra) {
    std::filesystem::copy(checkpoint, run_dir + "/" + std::filesystem::path(checkpoint).filename().string());
    const RunResult r = run_luong(train(run_dir, steps, "--resume auto " + extra));
    EXPECT_EQ(r.status, 0) << r.output;
    return r.output;
  }
  // The validation perplexity metrics.jsonl recorded at `step`.
  static double valid_ppl_at(const std::string& run_dir, int64_t step) {
    std::ifstream in(run_dir + "/metrics.jsonl");
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j["type"] == "valid" && j["step"] == step) return j["valid_ppl"];
    }
    ADD_FAILURE() << "no validation at step " << step << " in " << run_dir;
    return 0;
  }
  static std::string data_;
};
std::string EmaTest::data_;

TEST_F(EmaTest, ValidatesAndSavesTheAverageWhileTrainingTheParameters) {
  const std::string plain = fresh_dir("ema_plain"), averaged = fresh_dir("ema_averaged");
  ASSERT_EQ(run_luong(train(plain, 40, "--quiet")).status, 0);
  const RunResult r = run_luong(train(averaged, 40, "--set optim.ema_decay=0.9"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("keeping an exponential moving average of the parameters (optim.ema_decay 0.9)"),
            std::string::npos)
      << r.output;
  const Checkpoint ckpt = load_checkpoint(checkpoint_path(averaged, 40));
  // The optimizer stepped the same parameters as the run without an average, bit for bit: ema/training_params
  // is the flat buffer (the model's parameter order), model/ a tensor per name, so they are compared as sorted
  // values. The average is another model.
  auto sorted_values = [](const StateDict& model) {
    std::vector<double> out;
    for (const auto& [name, t] : model.tensors)
      for (double v : t.to_vector()) out.push_back(v);
    std::sort(out.begin(), out.end());
    return out;
  };
  const Checkpoint plain_ckpt = load_checkpoint(checkpoint_path(plain, 40));
  EXPECT_EQ(plain_ckpt.state.tensors.count("ema/training_params"), 0u);  // a run without an average writes none
  std::vector<double> training = ckpt.state.tensors.at("ema/training_params").to_vector();
  std::sort(training.begin(), training.end());
  EXPECT_EQ(training, sorted_values(plain_ckpt.state.sub("model")));
  EXPECT_NE(sorted_values(ckpt.state.sub("model")), training);
  EXPECT_EQ(ckpt.state.ints.at("ema/updates"), 40);
  EXPECT_DOUBLE_EQ(ckpt.state.floats.at("ema/decay"), 0.9);

  // The validation measured the average: luong eval on the checkpoint gives the recorded perplexity, which
  // is not the plain run's.
  const RunResult e = run_luong("eval --checkpoint " + checkpoint_path(averaged, 40) + " --src " + data_ +
                                "/valid.src --ref " + data_ + "/valid.tgt --beam 1 --json 2>/dev/null");
  ASSERT_EQ(e.status, 0) << e.output;
  const double recorded = valid_ppl_at(averaged, 40);
  EXPECT_NEAR(nlohmann::json::parse(e.output)["ppl"].get<double>(), recorded, 1e-4 * recorded) << e.output;
  EXPECT_GT(std::abs(recorded - valid_ppl_at(plain, 40)), 1e-3 * recorded);

  // luong average of such checkpoints averages their averages and keeps no training parameters.
  const std::string averaged_model = averaged + "/avg.h5";
  const RunResult avg = run_luong("average -o " + averaged_model + " " + checkpoint_path(averaged, 30) + " " +
                                  checkpoint_path(averaged, 40));
  ASSERT_EQ(avg.status, 0) << avg.output;
  const Checkpoint out = load_checkpoint(averaged_model);
  EXPECT_TRUE(out.state.sub("ema").tensors.empty() && out.state.sub("ema").ints.empty());
  const StateDict at30 = load_checkpoint(checkpoint_path(averaged, 30)).state.sub("model");
  for (const auto& [name, t] : ckpt.state.sub("model").tensors) {
    const std::vector<double> a = at30.tensors.at(name).to_vector(), b = t.to_vector(),
                              m = out.state.tensors.at("model/" + name).to_vector();
    for (size_t i = 0; i < m.size(); ++i) ASSERT_NEAR(m[i], (a[i] + b[i]) / 2, 1e-6) << name;
  }
}

TEST_F(EmaTest, AStoppedRunResumesExactlyAndAResumeWithoutTheAverageContinuesFromTheParameters) {
  const std::string straight = fresh_dir("ema_straight"), stopped = fresh_dir("ema_stopped");
  const std::string ema = " --quiet --set optim.ema_decay=0.9";
  ASSERT_EQ(run_luong(train(straight, 40, ema)).status, 0);
  ASSERT_EQ(run_luong(train(stopped, 20, ema)).status, 0);
  const RunResult resumed = run_luong(train(stopped, 40, ema + " --resume auto"));
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  const Checkpoint a = load_checkpoint(checkpoint_path(straight, 40)),
                   b = load_checkpoint(checkpoint_path(stopped, 40));
  expect_bitwise_equal(a.state.sub("model"), b.state.sub("model"));
  expect_bitwise_equal(a.state.sub("ema"), b.state.sub("ema"));
  EXPECT_EQ(b.state.ints.at("ema/updates"), 40);

  // Resumed without the average: the run goes on from the training parameters, as one that never kept it.
  const std::string plain = fresh_dir("ema_plain_to_40"), dropped = fresh_dir("ema_dropped");
  ASSERT_EQ(run_luong(train(plain, 40, "--quiet")).status, 0);
  const std::string d = resume_a_copy(checkpoint_path(stopped, 20), dropped, 40, "");
  EXPECT_NE(d.find("was written with optim.ema_decay, this run keeps no average: it continues from the training "
                   "parameters"),
            std::string::npos)
      << d;
  const Checkpoint c = load_checkpoint(checkpoint_path(dropped, 40));
  expect_bitwise_equal(load_checkpoint(checkpoint_path(plain, 40)).state.sub("model"), c.state.sub("model"));
  EXPECT_EQ(c.state.tensors.count("ema/training_params"), 0u);

  // Resumed with an average its run did not keep: it starts from the parameters at that step, and says so.
  const std::string added = fresh_dir("ema_added");
  const std::string g = resume_a_copy(checkpoint_path(plain, 20), added, 30, "--set optim.ema_decay=0.9");
  EXPECT_NE(g.find("holds no parameter average (its run kept none); the average starts from the parameters at this "
                   "step"),
            std::string::npos)
      << g;
  EXPECT_EQ(load_checkpoint(checkpoint_path(added, 30)).state.ints.at("ema/updates"), 10);
}

TEST_F(EmaTest, ADecayOfOneOrMoreIsRefusedNamingTheKey) {
  const RunResult r = run_luong(train(fresh_dir("ema_bad"), 10, "--set optim.ema_decay=1"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("optim.ema_decay"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace luong::testing
