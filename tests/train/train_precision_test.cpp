// train.precision end to end on the CPU (bf16 on the CPU's bf16 kernel or emulated, tf32 emulated): a tiny
// model trained with --set train.precision=bf16 learns, keeps float32 parameters and optimizer state, ends close
// to but not equal to the float32 run (tf32 closer still); a bad value is rejected naming it; `luong eval` uses
// the precision stored in the checkpoint's config; the log names the CPU's bf16 kernel, which LUONG_BF16_KERNEL
// can choose.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "framework/core/precision.h"
#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "models/nmt/data/corpus.h"
#include "models/nmt/data/text_reader.h"
#include "models/nmt/nmt_task.h"
#include "models/nmt/translator.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

// Long enough for the loss to fall clearly; trajectories in different precisions drift apart over that
// many Adam steps (as any perturbation would), so parameters are compared early, at kEarlyStep.
constexpr int64_t kSteps = 300, kEarlyStep = 30;

class TrainPrecisionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = generated_corpus("precision_data", "--train 400 --valid 40 --test 10");
    for (const char* p : {"fp32", "tf32", "bf16"}) {
      const std::string dir = fresh_dir(std::string("precision_") + p);
      runs_[p] = run_luong(train_args(dir, p));
      dirs_[p] = dir;
    }
  }
  static std::string train_args(const std::string& run_dir, const std::string& precision) {
    return tiny_train_command(run_dir, data_) +
           " --set model.hidden_size=32 --set model.embedding_size=24 --set train.batch_size=16" +
           " --set train.max_epochs=0 --set train.max_steps=" + std::to_string(kSteps) +
           " --set train.log_every=30 --set train.valid_every=" + std::to_string(kSteps) +
           " --set train.checkpoint_every=" + std::to_string(kEarlyStep) + " --set train.keep_checkpoints=0" +
           " --set train.precision=" + precision;
  }
  // The "train" records' losses of a run, in step order.
  static std::vector<double> train_losses(const std::string& run_dir) {
    std::vector<double> out;
    std::ifstream in(run_dir + "/metrics.jsonl");
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j.value("type", "") == "train") out.push_back(j.at("loss").get<double>());
    }
    return out;
  }
  static double last_valid_ppl(const std::string& run_dir) {
    double ppl = 0;
    std::ifstream in(run_dir + "/metrics.jsonl");
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j.value("type", "") == "valid") ppl = j.at("valid_ppl").get<double>();
    }
    return ppl;
  }
  static Checkpoint final_checkpoint(const std::string& precision, int64_t step = kSteps) {
    return load_checkpoint(checkpoint_path(dirs_.at(precision), step));
  }
  // Every model parameter of a run at `step`, concatenated in name order.
  static std::vector<double> parameters(const std::string& precision, int64_t step) {
    std::vector<double> out;
    for (const auto& [name, t] : final_checkpoint(precision, step).state.sub("model").tensors) {
      const auto v = t.to_vector();
      out.insert(out.end(), v.begin(), v.end());
    }
    return out;
  }
  // ||x - y|| / ||y||
  static double relative_distance(const std::vector<double>& x, const std::vector<double>& y) {
    EXPECT_EQ(x.size(), y.size());
    double num = 0, den = 0;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) num += (x[i] - y[i]) * (x[i] - y[i]), den += y[i] * y[i];
    return std::sqrt(num / den);
  }

  static std::string data_;
  static std::map<std::string, RunResult> runs_;
  static std::map<std::string, std::string> dirs_;
};
std::string TrainPrecisionTest::data_;
std::map<std::string, RunResult> TrainPrecisionTest::runs_;
std::map<std::string, std::string> TrainPrecisionTest::dirs_;

TEST_F(TrainPrecisionTest, Bf16RunLearnsAndSaysSo) {
  const RunResult& r = runs_.at("bf16");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("GEMMs with bf16 inputs"), std::string::npos) << r.output;
  EXPECT_EQ(runs_.at("fp32").output.find("GEMMs with"), std::string::npos) << "fp32 is the quiet default";
  std::ifstream cfg(dirs_.at("bf16") + "/config.yaml");
  const std::string text((std::istreambuf_iterator<char>(cfg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("precision: bf16"), std::string::npos) << text;
  const std::vector<double> losses = train_losses(dirs_.at("bf16"));
  ASSERT_EQ(losses.size(), static_cast<size_t>(kSteps / 30));
  EXPECT_LT(losses.back(), 0.8 * losses.front()) << "bf16 training should reduce the loss";
  for (double l : losses) EXPECT_TRUE(std::isfinite(l));
}

// The log names the CPU's bf16 kernel; LUONG_BF16_KERNEL chooses another (the emulation is always there), and a
// name that is not a kernel stops the run with an error that names it and the choices.
TEST_F(TrainPrecisionTest, TheBf16KernelIsNamedAndChosenByTheEnvironment) {
  const RunResult& r = runs_.at("bf16");
  ASSERT_EQ(r.status, 0) << r.output;
  const bool named = r.output.find("CPU: AMX tiles") != std::string::npos ||
                     r.output.find("CPU: AVX512-BF16") != std::string::npos ||
                     r.output.find("CPU: emulated") != std::string::npos;
  EXPECT_TRUE(named) << r.output;
  // tf32 has no CPU kernel: its log says emulated, whatever bf16 kernel the CPU has.
  EXPECT_NE(runs_.at("tf32").output.find("CPU: emulated, slower than fp32"), std::string::npos)
      << runs_.at("tf32").output;
  auto short_run = [](const std::string& kernel, const std::string& name) {
    return run_luong_shell("LUONG_BF16_KERNEL=" + kernel + " " + std::string(LUONG_BINARY) + " " +
                           train_args(fresh_dir("precision_kernel_" + name), "bf16") +
                           " --set train.max_steps=2 --set train.checkpoint_every=2 2>&1");
  };
  const RunResult emulated = short_run("emulated", "emulated");
  ASSERT_EQ(emulated.status, 0) << emulated.output;
  EXPECT_NE(emulated.output.find("CPU: emulated, slower than fp32"), std::string::npos) << emulated.output;
  const RunResult bad = short_run("tiles", "bad");
  EXPECT_NE(bad.status, 0) << bad.output;
  EXPECT_NE(bad.output.find("LUONG_BF16_KERNEL=tiles is not a bf16 kernel (amx, avx512 or emulated)"),
            std::string::npos)
      << bad.output;
}

TEST_F(TrainPrecisionTest, ParametersAndOptimizerStateStayFloat32) {
  ASSERT_EQ(runs_.at("bf16").status, 0) << runs_.at("bf16").output;
  const Checkpoint c = final_checkpoint("bf16");
  EXPECT_EQ(c.metadata.at("dtype"), "float32");
  int floating = 0;
  for (const auto& [name, t] : c.state.tensors) {
    if (t.dtype() == DType::i64 || t.dtype() == DType::u8) continue;
    EXPECT_EQ(t.dtype(), DType::f32) << name;  // a bf16 tensor would come back as bf16 (checkpoint_reader)
    ++floating;
  }
  EXPECT_GT(c.state.sub("model").tensors.size(), 5u);
  EXPECT_GT(floating, static_cast<int>(c.state.sub("model").tensors.size()));  // Adam's moments are there too
}

TEST_F(TrainPrecisionTest, Bf16EndsCloseToFloat32ButNotEqualAndTf32CloserStill) {
  for (const char* p : {"fp32", "tf32", "bf16"}) ASSERT_EQ(runs_.at(p).status, 0) << p << runs_.at(p).output;
  for (int64_t step : {kEarlyStep, kSteps}) {
    const std::vector<double> fp32 = parameters("fp32", step), bf16 = parameters("bf16", step),
                              tf32 = parameters("tf32", step);
    const double d_bf16 = relative_distance(bf16, fp32), d_tf32 = relative_distance(tf32, fp32);
    std::printf("step %lld: parameter distance to fp32: bf16 %.3g, tf32 %.3g\n", static_cast<long long>(step),
                d_bf16, d_tf32);
    EXPECT_GT(d_bf16, 1e-6) << "bf16 GEMMs must change the result";
    EXPECT_GT(d_tf32, 0.0) << "tf32 GEMMs must change the result";
    if (step == kEarlyStep) {
      EXPECT_LT(d_bf16, 2e-2) << "but only by a rounding-sized amount";
      EXPECT_LT(d_tf32, d_bf16 / 2) << "tf32 keeps 3 more mantissa bits than bf16";
    }
  }
  // The runs end at the same quality: training and validation loss within a few percent.
  const double loss32 = train_losses(dirs_.at("fp32")).back(), loss16 = train_losses(dirs_.at("bf16")).back();
  EXPECT_NEAR(loss16, loss32, 0.03 * loss32);
  const double ppl32 = last_valid_ppl(dirs_.at("fp32")), ppl16 = last_valid_ppl(dirs_.at("bf16"));
  EXPECT_NEAR(ppl16, ppl32, 0.05 * ppl32);
}

TEST_F(TrainPrecisionTest, UnknownPrecisionIsRejectedNamingIt) {
  const RunResult r = run_luong(train_args(fresh_dir("precision_bad"), "fp16"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("train.precision"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'fp16'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fp32, tf32, bf16"), std::string::npos) << r.output;
}

// `luong eval` on the bf16 checkpoint reports the perplexity of bf16 GEMMs, not of float32 ones.
TEST_F(TrainPrecisionTest, EvalUsesTheCheckpointsPrecision) {
  ASSERT_EQ(runs_.at("bf16").status, 0) << runs_.at("bf16").output;
  const std::string ckpt = checkpoint_path(dirs_.at("bf16"), kSteps), src = data_ + "/test.src",
                    ref = data_ + "/test.tgt";
  const RunResult r = run_luong("eval --checkpoint " + ckpt + " --src " + src + " --ref " + ref + " --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const double cli_ppl = nlohmann::json::parse(r.output.substr(r.output.rfind('{'))).at("ppl").get<double>();

  const nmt::Translator translator(ckpt, Device::cpu());
  EXPECT_EQ(translator.config().train.precision, "bf16");
  const nmt::Corpus corpus = nmt::encode_corpus(
      nmt::tokenize_corpus(nmt::read_parallel(src, ref), translator.tokenizer().options(), translator.subwords()),
      translator.src_vocab(), translator.tgt_vocab(), 0);
  auto ppl_in = [&](GemmPrecision p) {
    const GemmPrecisionGuard guard(p);
    const ValidationResult v = nmt::evaluate_loss(translator.model(), corpus, 32, Device::cpu());
    return std::exp(v.loss_sum / static_cast<double>(v.tokens));
  };
  const double ppl16 = ppl_in(GemmPrecision::bf16), ppl32 = ppl_in(GemmPrecision::fp32);
  ASSERT_NE(ppl16, ppl32);
  EXPECT_LT(std::abs(cli_ppl - ppl16), std::abs(cli_ppl - ppl32) / 10) << cli_ppl << " " << ppl16 << " " << ppl32;
  EXPECT_EQ(gemm_precision(), GemmPrecision::fp32);
}

}  // namespace
}  // namespace luong::testing
