// The optim.* keys reach the optimizer `luong train` builds: optim.momentum gives SGD a velocity (saved in the
// checkpoint, the first step unchanged since m = g then, later steps not).
#include <gtest/gtest.h>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "tests/support/model_diff.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

TEST(OptimKeys, MomentumGivesSgdAVelocityFromItsSecondStep) {
  const std::string data = generated_corpus("optim_keys_data", "--train 200 --valid 10 --test 10");
  auto train = [&](const std::string& run, const std::string& extra) {
    const RunResult r = run_luong(tiny_train_command(run, data) +
                                  " --quiet --set model.hidden_size=16 --set model.embedding_size=16"
                                  " --set optim.name=sgd --set optim.lr=0.5 --set train.max_epochs=0"
                                  " --set train.max_steps=5 --set train.checkpoint_every=1 --set train.valid_every=0"
                                  " --set train.keep_checkpoints=0 " +
                                  extra);
    EXPECT_EQ(r.status, 0) << r.output;
  };
  const std::string plain = fresh_dir("optim_keys_plain"), heavy = fresh_dir("optim_keys_momentum");
  train(plain, "");
  train(heavy, "--set optim.momentum=0.9");
  const Checkpoint c = load_checkpoint(checkpoint_path(heavy, 5));
  ASSERT_TRUE(c.state.tensors.count("optim/momentum"));
  EXPECT_EQ(load_checkpoint(checkpoint_path(plain, 5)).state.tensors.count("optim/momentum"), 0u);
  int64_t params = 0;
  for (const auto& [name, t] : c.state.sub("model").tensors) params += t.numel();
  EXPECT_EQ(c.state.tensors.at("optim/momentum").numel(), params);
  expect_bitwise_equal(load_checkpoint(checkpoint_path(plain, 1)).state.sub("model"),
                       load_checkpoint(checkpoint_path(heavy, 1)).state.sub("model"));
  EXPECT_GT(max_rel_diff(checkpoint_path(plain, 5), checkpoint_path(heavy, 5)), 1e-3);
}

}  // namespace
}  // namespace luong::testing
