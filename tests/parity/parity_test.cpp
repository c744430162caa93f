// Parity with PyTorch: `luong dump-step` writes one training step of a fresh model (parameters, batch, loss,
// gradients, the updated parameters) and bench/torch_reference/parity.py recomputes it with an independent
// PyTorch implementation of the same model. Skipped when python3 cannot import torch, h5py and numpy
// (they are test-only dependencies: pip install torch h5py numpy).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include <gtest/gtest.h>

namespace {

std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed: " + cmd};
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string python() {
  const char* p = std::getenv("LUONG_PYTHON");
  return p && *p ? p : "python3";
}

class TorchParity : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto [rc, out] = run(python() + " -c 'import torch, h5py, numpy'");
    have_torch_ = rc == 0;
    if (!have_torch_) return;
    dir_ = std::filesystem::temp_directory_path() / ("luong_parity_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto [grc, gout] = run(std::string(LUONG_BINARY) + " gen-data --out " + (dir_ / "toy").string() +
                           " --train 300 --valid 10 --test 10");
    ASSERT_EQ(grc, 0) << gout;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void SetUp() override {
    if (!have_torch_) GTEST_SKIP() << "python3 cannot import torch, h5py and numpy (pip install torch h5py numpy)";
  }

  // Runs dump-step on the toy data with a 2-layer model whose embedding and hidden sizes differ (so a
  // transposed weight cannot pass), SGD lr 1 and a clip low enough to engage (the token-averaged norm is ~0.17). Returns the file.
  static std::string dump(const std::string& name, const std::string& dtype, const std::string& extra_sets) {
    const std::string toy = (dir_ / "toy").string(), out = (dir_ / (name + ".h5")).string();
    const std::string cmd = std::string(LUONG_BINARY) + " dump-step --config " + LUONG_SOURCE_DIR +
                            "/configs/tiny.yaml --out " + out + " --dtype " + dtype + " --batch 12" +
                            " --set data.train_src=" + toy + "/train.src --set data.train_tgt=" + toy + "/train.tgt" +
                            " --set data.valid_src= --set data.valid_tgt= --set model.layers=2" +
                            " --set model.hidden_size=20 --set model.embedding_size=12 --set model.dropout=0" +
                            " --set optim.name=sgd --set optim.lr=1.0 --set optim.clip_norm=0.05 " + extra_sets;
    auto [rc, text] = run(cmd);
    EXPECT_EQ(rc, 0) << cmd << "\n" << text;
    return out;
  }
  static std::pair<int, std::string> parity(const std::string& file, const std::string& args = "") {
    return run(python() + " " + LUONG_SOURCE_DIR + "/bench/torch_reference/parity.py " + file + " " + args);
  }

  static inline bool have_torch_ = false;
  static inline std::filesystem::path dir_;
};

// The benchmark model's structure: general attention with input feeding, float32 within 1e-5.
TEST_F(TorchParity, GeneralInputFeedingFloat32) {
  const std::string f = dump("general_f32", "float32", "--set model.attention=general --set model.input_feeding=true");
  auto [rc, out] = parity(f, "--tol 1e-5");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("parity PASS"), std::string::npos) << out;
}

// The same in float64: any difference in the computation itself shows far above rounding.
TEST_F(TorchParity, GeneralInputFeedingFloat64) {
  const std::string f = dump("general_f64", "float64", "--set model.attention=general --set model.input_feeding=true");
  auto [rc, out] = parity(f, "--tol 1e-10");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("parity PASS"), std::string::npos) << out;
}

TEST_F(TorchParity, DotAttentionWithoutInputFeedingFloat64) {
  const std::string f = dump("dot_f64", "float64", "--set model.attention=dot --set model.input_feeding=false");
  auto [rc, out] = parity(f, "--tol 1e-10");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("parity PASS"), std::string::npos) << out;
}

// The check can fail: one gradient entry of the dump perturbed by 1e-4 of the tensor's scale is reported
// under its name.
TEST_F(TorchParity, DetectsAPerturbedGradient) {
  const std::string f = dump("perturbed", "float64", "--set model.attention=general");
  auto [prc, pout] = run(python() + " -c \"import h5py, numpy as np; f = h5py.File('" + f + "', 'r+'); " +
                         "d = f['grad/decoder/combine/weight']; a = d[()]; a[3, 4] += 1e-4 * np.abs(a).max(); " +
                         "d[...] = a; f.close()\"");
  ASSERT_EQ(prc, 0) << pout;
  auto [rc, out] = parity(f, "--tol 1e-10");
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("parity FAIL"), std::string::npos) << out;
  EXPECT_NE(out.find("worst grad decoder/combine/weight"), std::string::npos) << out;
}

// dump-step refuses dropout, which no reference could reproduce, and says how to turn it off.
// (Needs no python: never skipped.)
TEST(DumpStep, RefusesDropout) {
  const auto out_file = std::filesystem::temp_directory_path() / ("luong_parity_never_" + std::to_string(::getpid()));
  auto [rc, out] = run(std::string(LUONG_BINARY) + " dump-step --config " + LUONG_SOURCE_DIR +
                       "/configs/tiny.yaml --set model.dropout=0.3 --out " + out_file.string());
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("model.dropout must be 0"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(out_file));
}

}  // namespace
