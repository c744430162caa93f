// The NMT schema: required keys exist, the typed struct is filled, shipped configs load, the committed
// reference matches the schema, and the `luong config` command works end to end.
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "models/nmt/nmt_config.h"
#include "tests/data/test_files.h"

namespace luong::nmt {
namespace {

// Runs a shell command, returning its exit status and combined output.
std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, ""};
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(NmtSchema, HasEveryRequiredKey) {
  const ConfigSchema s = nmt_schema();
  // Kept packed: clang-format would put each key on a line of its own.
  // clang-format off
  for (const char* key :
       {"seed", "device", "model.layers", "model.hidden_size", "model.embedding_size", "model.dropout",
        "model.attention", "model.attention_score", "model.attention_window", "model.input_feeding",
        "model.reverse_source", "model.bidirectional_encoder", "model.tie_embeddings", "model.init",
        "model.init_range", "data.train_src", "data.train_tgt", "data.valid_src", "data.valid_tgt", "data.test_src",
        "data.test_tgt", "data.src_vocab_size", "data.tgt_vocab_size", "data.min_freq", "data.lowercase",
        "data.max_len", "train.batch_size", "train.batch_by", "train.max_steps", "train.max_epochs",
        "train.valid_every", "train.log_every", "train.checkpoint_every", "train.keep_checkpoints",
        "train.early_stopping", "train.label_smoothing", "train.max_bad_steps", "optim.name", "optim.lr",
        "optim.clip_norm", "optim.weight_decay", "optim.beta1", "optim.beta2", "optim.eps", "optim.schedule",
        "optim.decay_start", "optim.decay_factor", "optim.warmup_steps", "optim.plateau_patience", "dist.backend",
        "dist.bucket_mb", "dist.timeout_s", "dist.check_every", "eval.beam_size", "eval.length_penalty",
        "eval.max_len_ratio", "eval.batch_size"}) {
    const KeySpec* k = s.find(key);
    ASSERT_NE(k, nullptr) << key;
    EXPECT_FALSE(k->doc.empty()) << key << " has no documentation";
  }
  // clang-format on
}

TEST(NmtSchema, EveryDefaultPassesItsOwnRules) {
  const ConfigSchema s = nmt_schema();
  for (const auto& k : s.keys()) EXPECT_NO_THROW(s.validate(k, k.default_value, "")) << k.path;
}

TEST(NmtSchema, DefaultsMatchTheModelConfigStruct) {
  const NmtConfig n = nmt_config_from(Config(nmt_schema()));
  const ModelConfig m;
  EXPECT_EQ(n.model.layers, m.layers);
  EXPECT_EQ(n.model.hidden_size, m.hidden_size);
  EXPECT_EQ(n.model.embedding_size, m.embedding_size);
  EXPECT_EQ(n.model.dropout, m.dropout);
  EXPECT_EQ(n.model.attention, m.attention);
  EXPECT_EQ(n.model.attention_score, m.attention_score);
  EXPECT_EQ(n.model.attention_window, m.attention_window);
  EXPECT_EQ(n.model.input_feeding, m.input_feeding);
  EXPECT_EQ(n.model.reverse_source, m.reverse_source);
  EXPECT_EQ(n.model.init, m.init);
  EXPECT_EQ(n.model.init_range, m.init_range);
  const NmtConfig plain;  // the struct's defaults equal the schema's
  EXPECT_EQ(n.seed, plain.seed);
  EXPECT_EQ(n.data.src_vocab_size, plain.data.src_vocab_size);
  EXPECT_EQ(n.train.batch_size, plain.train.batch_size);
  EXPECT_EQ(n.train.max_epochs, plain.train.max_epochs);
  EXPECT_EQ(n.optim.name, plain.optim.name);
  EXPECT_EQ(n.optim.eps, plain.optim.eps);
  EXPECT_EQ(n.dist.bucket_mb, plain.dist.bucket_mb);
  EXPECT_EQ(n.eval.beam_size, plain.eval.beam_size);
  EXPECT_EQ(n.eval.batch_size, plain.eval.batch_size);
}

TEST(NmtSchema, FillsStructFromOverrides) {
  Config c(nmt_schema());
  for (const char* s : {"seed=9", "device=cuda:1", "model.layers=4", "model.attention=local-p", "model.init_range=0.08",
                        "data.train_src=a.en", "data.train_tgt=a.de", "data.lowercase=true", "train.batch_by=tokens",
                        "train.batch_size=2000", "optim.name=sgd", "optim.lr=1", "optim.schedule=luong",
                        "optim.decay_start=8", "dist.backend=nccl", "eval.beam_size=12", "train.max_bad_steps=3"})
    c.set(s);
  const NmtConfig n = nmt_config_from(c);
  EXPECT_EQ(n.seed, 9u);
  EXPECT_EQ(n.device, "cuda:1");
  EXPECT_EQ(n.model.layers, 4);
  EXPECT_EQ(n.model.attention, "local-p");
  EXPECT_DOUBLE_EQ(n.model.init_range, 0.08);
  EXPECT_EQ(n.data.train_src, "a.en");
  EXPECT_TRUE(n.data.lowercase);
  EXPECT_EQ(n.train.batch_by, "tokens");
  EXPECT_EQ(n.train.batch_size, 2000);
  EXPECT_EQ(n.train.max_bad_steps, 3);
  EXPECT_EQ(n.optim.name, "sgd");
  EXPECT_DOUBLE_EQ(n.optim.lr, 1.0);
  EXPECT_EQ(n.optim.schedule, "luong");
  EXPECT_EQ(n.dist.backend, "nccl");
  EXPECT_EQ(n.eval.beam_size, 12);
}

TEST(NmtSchema, RejectsBadDevicesAndCrossKeyConflicts) {
  Config c(nmt_schema());
  EXPECT_ERROR_HAS(c.set("device=gpu"), "device", "'gpu' is not a device");
  EXPECT_ERROR_HAS(c.set("device=cuda:x"), "device", "cuda:N");
  EXPECT_ERROR_HAS(c.set("optim.name=adagrad"), "optim.name", "sgd, adam");
  EXPECT_ERROR_HAS(c.set("model.attention="), "model.attention", "a name is required");
  EXPECT_ERROR_HAS(c.set("model.dropout=1.5"), "model.dropout", "out of range");
  Config t(nmt_schema());
  t.set("model.tie_embeddings=true");
  t.set("model.embedding_size=128");
  EXPECT_ERROR_HAS(nmt_config_from(t), "model.tie_embeddings", "embedding_size (128)", "hidden_size (256)");
  Config b(nmt_schema());  // caught with the config, not when the model is built in a fresh run directory
  b.set("model.bidirectional_encoder=true");
  b.set("model.hidden_size=63");
  EXPECT_ERROR_HAS(nmt_config_from(b), "model.bidirectional_encoder needs an even model.hidden_size", "got 63");
  Config v(nmt_schema());
  v.set("data.valid_src=x");
  EXPECT_ERROR_HAS(nmt_config_from(v), "data.valid_src and data.valid_tgt");
  Config e(nmt_schema());
  e.set("train.max_epochs=0");
  EXPECT_ERROR_HAS(nmt_config_from(e), "train.max_steps and train.max_epochs are both 0");
}

TEST(ShippedConfigs, LoadAndValidate) {
  for (const char* name : {"tiny", "multi30k", "wmt14-luong"}) {
    const std::string path = std::string(LUONG_SOURCE_DIR) + "/configs/" + name + ".yaml";
    SCOPED_TRACE(path);
    Config c = Config::load_file(nmt_schema(), path);
    const NmtConfig n = nmt_config_from(c);
    EXPECT_FALSE(n.data.train_src.empty());
    EXPECT_FALSE(n.data.valid_src.empty());
    // The dump of a shipped config reads back to the same config.
    EXPECT_EQ(Config::load_string(nmt_schema(), c.dump()).dump(), c.dump());
  }
}

TEST(ShippedConfigs, PaperSettingMatchesLuong2015) {
  const NmtConfig n =
      nmt_config_from(Config::load_file(nmt_schema(), std::string(LUONG_SOURCE_DIR) + "/configs/wmt14-luong.yaml"));
  EXPECT_EQ(n.model.layers, 4);
  EXPECT_EQ(n.model.hidden_size, 1000);
  EXPECT_EQ(n.model.embedding_size, 1000);
  EXPECT_EQ(n.data.src_vocab_size, 50000 + 4);
  EXPECT_EQ(n.train.batch_size, 128);
  EXPECT_DOUBLE_EQ(n.model.dropout, 0.2);
  EXPECT_EQ(n.optim.name, "sgd");
  EXPECT_DOUBLE_EQ(n.optim.lr, 1.0);
  EXPECT_EQ(n.train.max_epochs, 12);
  EXPECT_EQ(n.optim.schedule, "luong");
  EXPECT_EQ(n.optim.decay_start, 8);
  EXPECT_DOUBLE_EQ(n.optim.clip_norm, 5.0);
  EXPECT_DOUBLE_EQ(n.model.init_range, 0.1);
  EXPECT_EQ(n.model.attention, "local-p");
  EXPECT_EQ(n.model.attention_window, 10);
  EXPECT_TRUE(n.model.input_feeding);
  EXPECT_TRUE(n.model.reverse_source);
}

TEST(ShippedConfigs, CommittedReferenceIsUpToDate) {
  // Compared as a whole (a diff of a long Markdown file is noise); the hint says how to fix it.
  EXPECT_TRUE(read_text(std::string(LUONG_SOURCE_DIR) + "/configs/README.md") == nmt_config_reference())
      << "configs/README.md is stale; regenerate with: luong config --doc > configs/README.md";
}

TEST(ConfigCommand, PrintsResolvedConfigWithOverrides) {
  testing::TempDir dir;
  const std::string f = dir.file("c.yaml", "model:\n  layers: 3\n");
  auto [rc, out] = run(std::string(LUONG_BINARY) + " config --config " + f + " --set model.hidden_size=64");
  ASSERT_EQ(rc, 0) << out;
  Config c = Config::load_string(nmt_schema(), out, "luong config output");
  EXPECT_EQ(c.get_int("model.layers"), 3);
  EXPECT_EQ(c.get_int("model.hidden_size"), 64);
  EXPECT_EQ(c.get_int("model.embedding_size"), 256);
}

TEST(ConfigCommand, ReportsErrorsAndPrintsReference) {
  auto [rc, out] = run(std::string(LUONG_BINARY) + " config --set model.layerz=3");
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("unknown key 'model.layerz'"), std::string::npos) << out;
  auto [rc2, doc] = run(std::string(LUONG_BINARY) + " config --doc");
  EXPECT_EQ(rc2, 0);
  EXPECT_EQ(doc, nmt_config_reference());
}

}  // namespace
}  // namespace luong::nmt
