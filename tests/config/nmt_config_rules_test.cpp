// NMT config values that used to pass `luong config` and `sweep --dry-run` and only fail once `train` built the
// optimizer, schedule or attention (with internal check text): they are refused when the config is loaded.
#include <gtest/gtest.h>

#include "models/nmt/nmt_config.h"
#include "tests/data/test_files.h"
#include "tests/support/run_luong.h"

namespace luong::nmt {
namespace {

// The error of loading the defaults with one --set (key-level rules) and building the struct (cross-key rules).
std::string error_with(const std::vector<std::string>& sets) {
  return testing::error_of([&] {
    Config c(nmt_schema());
    for (const auto& s : sets) c.set(s);
    nmt_config_from(c);
  });
}

TEST(NmtConfigRules, LearningRateMustBePositiveAndFinite) {
  EXPECT_NE(error_with({"optim.lr=0"}).find("optim.lr: value 0.0 is out of range (0, inf)"), std::string::npos)
      << error_with({"optim.lr=0"});
  EXPECT_NE(error_with({"optim.lr=.inf"}).find("optim.lr: value .inf is not allowed: expected a finite number"),
            std::string::npos);
  EXPECT_NE(error_with({"optim.lr=-1"}).find("out of range (0, inf)"), std::string::npos);
}

TEST(NmtConfigRules, FloatKeysRejectInfinity) {
  for (const char* key : {"optim.clip_norm", "optim.weight_decay", "optim.eps", "model.init_range", "dist.bucket_mb",
                          "eval.length_penalty", "eval.max_len_ratio"}) {
    const std::string msg = error_with({std::string(key) + "=.inf"});
    EXPECT_NE(msg.find(std::string(key) + ": value .inf is not allowed: expected a finite number"), std::string::npos)
        << msg;
  }
}

TEST(NmtConfigRules, DecayFactorAndEpsExcludeZero) {
  EXPECT_NE(error_with({"optim.decay_factor=0"}).find("optim.decay_factor: value 0.0 is out of range (0, 1]"),
            std::string::npos);
  EXPECT_NE(error_with({"optim.eps=0"}).find("optim.eps: value 0.0 is out of range (0, inf)"), std::string::npos);
}

TEST(NmtConfigRules, WarmupScheduleNeedsWarmupSteps) {
  const std::string msg = error_with({"optim.schedule=warmup"});
  EXPECT_NE(msg.find("optim.warmup_steps: value 0 is out of range [1, "), std::string::npos) << msg;
  EXPECT_NE(msg.find("optim.schedule warmup"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("check '"), std::string::npos) << msg;  // no internal check text
  Config ok(nmt_schema());
  ok.set("optim.schedule=warmup");
  ok.set("optim.warmup_steps=100");
  EXPECT_EQ(nmt_config_from(ok).optim.warmup_steps, 100);
}

TEST(NmtConfigRules, MomentumIsForSgdAndBelowOne) {
  const std::string msg = error_with({"optim.momentum=0.9"});  // the default optimizer is adam
  EXPECT_NE(msg.find("optim.momentum: 0.9 is for optim.name sgd; adam keeps its own (optim.beta1 for adam)"),
            std::string::npos)
      << msg;
  EXPECT_NE(error_with({"optim.name=sgd", "optim.momentum=1"}).find("optim.momentum: value 1.0 is out of range"),
            std::string::npos);
  Config ok(nmt_schema());
  ok.set("optim.name=sgd");
  ok.set("optim.momentum=0.9");
  EXPECT_EQ(nmt_config_from(ok).optim.momentum, 0.9);
}

TEST(NmtConfigRules, PlateauScheduleNeedsDecayBelowOneAndPatience) {
  EXPECT_NE(error_with({"optim.schedule=plateau", "optim.decay_factor=1"})
                .find("optim.decay_factor: value 1.0 is out of range (0, 1) with optim.schedule plateau"),
            std::string::npos);
  EXPECT_NE(error_with({"optim.schedule=plateau", "optim.plateau_patience=0"})
                .find("optim.plateau_patience: value 0 is out of range [1, "),
            std::string::npos);
}

TEST(NmtConfigRules, AttentionWindowAtLeastOne) {
  EXPECT_NE(error_with({"model.attention=local-p", "model.attention_window=0"})
                .find("model.attention_window: value 0 is out of range [1, 9223372036854775807]"),
            std::string::npos);
}

// The command-line paths run the same checks before anything else.
TEST(NmtConfigRules, ConfigAndTrainCommandsRefuseUpFront) {
  auto r = testing::run_luong("config --set optim.lr=0");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("luong: error: --set optim.lr=0: optim.lr: value 0.0 is out of range (0, inf)"),
            std::string::npos)
      << r.output;
  r = testing::run_luong("config --set optim.schedule=warmup");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("optim.warmup_steps"), std::string::npos) << r.output;
  testing::TempDir dir;
  r = testing::run_luong("train --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml --run-dir " +
                         dir.path("run") + " --set optim.schedule=warmup");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("optim.warmup_steps: value 0 is out of range [1, "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace luong::nmt
