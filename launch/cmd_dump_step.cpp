// `luong dump-step`: one training step of a freshly initialised model on a fixed batch, written to an HDF5
// file for an outside reference (bench/torch_reference/parity.py) to recompute and compare.
//   luong dump-step --config configs/tiny.yaml --set model.dropout=0 --out step.h5 [--batch 16] [--dtype float64]
//
// The file (a checkpoint, docs/CHECKPOINT.md) holds
//   model/<param>    the initial parameters, named as in a training checkpoint;
//   batch/*          src, src_lengths, tgt_in, tgt_out: the first --batch training pairs in file order, so
//                    lengths differ and padding is exercised;
//   grad/<param>     d(summed token cross-entropy)/d(param), before any scaling;
//   updated/<param>  the parameters after the trainer's update: gradients / tokens, clip to
//                    optim.clip_norm, one optim.name step at optim.lr;
//   step/loss, step/tokens, step/grad_norm (of the token-averaged gradient, before clipping);
//   spec/*           the model's shape, so the reference can build the same model from the file alone.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>

#include "framework/autograd/flat_parameters.h"
#include "framework/io/checkpoint.h"
#include "framework/optim/average_and_clip.h"
#include "framework/optim/optimizer.h"
#include "launch/commands.h"
#include "launch/run_config.h"
#include "models/nmt/data/batch.h"
#include "models/nmt/data/corpus.h"
#include "models/nmt/model.h"
#include "models/nmt/nmt_task.h"

namespace luong::cli {
namespace {

struct DumpStepArgs {
  std::string config;
  std::vector<std::string> sets;
  std::string out;
  int64_t batch = 16;
  std::string dtype = "float32";
  bool force = false;
};

// Checked before the step is computed: --out must not replace an existing file (another run's checkpoint)
// unless --force, and its directory must exist (a mistyped path must not create directories).
void check_output(const DumpStepArgs& a) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(a.out, ec)) LUONG_FAIL("dump-step: --out ", a.out, " is a directory; name the file to write");
  if (fs::exists(a.out, ec) && !a.force) LUONG_FAIL("dump-step: --out ", a.out, " exists; pass --force to replace it");
  const fs::path parent = fs::path(a.out).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    LUONG_FAIL("dump-step: the directory ", parent.string(), " of --out ", a.out,
               (fs::exists(parent, ec) ? " is not a directory" : " does not exist"), "; create it first");
}

std::vector<int64_t> lengths_of(const Tensor& t) {
  const int64_t* p = t.data<int64_t>();
  return std::vector<int64_t>(p, p + t.numel());
}

// The parameter's name below a section: "encoder.lstm.0.weight_ih" -> "<section>/encoder/lstm/0/weight_ih".
std::string entry(const std::string& section, const std::string& param) {
  return section + nmt::checkpoint_name(param).substr(std::string("model").size());
}

void write_config(const nmt::ModelConfig& m, const nmt::NmtConfig& c, StateDict& out) {
  out.ints["spec/src_vocab"] = m.src_vocab, out.ints["spec/tgt_vocab"] = m.tgt_vocab;
  out.ints["spec/pad_id"] = m.pad_id, out.ints["spec/layers"] = m.layers;
  out.ints["spec/hidden_size"] = m.hidden_size, out.ints["spec/embedding_size"] = m.embedding_size;
  out.ints["spec/input_feeding"] = m.input_feeding, out.ints["spec/reverse_source"] = m.reverse_source;
  out.ints["spec/bidirectional_encoder"] = m.bidirectional_encoder;
  out.ints["spec/tie_embeddings"] = m.tie_embeddings;
  out.strings["spec/attention"] = m.attention;
  out.strings["spec/optimizer"] = c.optim.name;
  out.floats["spec/lr"] = c.optim.lr, out.floats["spec/clip_norm"] = c.optim.clip_norm;
}

void run(const DumpStepArgs& a) {
  check_output(a);
  const LoadedConfig loaded = load_run_config(a.config, a.sets);
  const nmt::NmtConfig& c = loaded.nmt;
  LUONG_CHECK(c.model.dropout == 0.0, "dump-step: model.dropout must be 0 (got ", c.model.dropout,
              "): a reference cannot reproduce luong's dropout masks; pass --set model.dropout=0");
  LUONG_CHECK(c.train.label_smoothing == 0.0, "dump-step: train.label_smoothing must be 0, got ",
              c.train.label_smoothing);
  LUONG_CHECK(a.dtype == "float32" || a.dtype == "float64", "dump-step: --dtype must be float32 or float64, got '",
              a.dtype, "'");
  LUONG_CHECK(a.batch >= 1, "dump-step: --batch must be >= 1, got ", a.batch);
  // The step runs in full float32 (or float64) on the CPU: a config saying otherwise would be recorded in the
  // file and mislead the reference that reads it.
  LUONG_CHECK(c.train.precision == "fp32",
              "dump-step: train.precision must be fp32 (the reference step is exact "
              "float32 or float64 arithmetic), got ",
              c.train.precision);
  LUONG_CHECK(c.device == "cpu", "dump-step: device must be cpu (the step is computed on the CPU), got ", c.device);
  const DType dtype = a.dtype == "float64" ? DType::f64 : DType::f32;

  // The same data path and initialisation as NmtTask, without the shuffling iterator: a fixed batch.
  nmt::TokenizedCorpus text =
      nmt::tokenize_files(c.data.train_src, c.data.train_tgt, nmt::TokenizerOptions{c.data.lowercase}, {});
  std::string bpe_log;
  nmt::run_subwords(text, nmt::subword_settings(c.data), bpe_log);
  const auto sv = nmt::Vocabulary::build(nmt::count_tokens(text, text.src), c.data.src_vocab_size, c.data.min_freq);
  const auto tv = nmt::Vocabulary::build(nmt::count_tokens(text, text.tgt), c.data.tgt_vocab_size, c.data.min_freq);
  const nmt::Corpus corpus = nmt::encode_corpus(text, sv, tv, c.data.max_len);
  const int64_t n = std::min<int64_t>(a.batch, static_cast<int64_t>(corpus.examples.size()));
  LUONG_CHECK(n > 0, "dump-step: no training pairs in ", c.data.train_src, " / ", c.data.train_tgt);
  std::vector<int64_t> rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = i;
  const nmt::Batch batch = nmt::make_batch(corpus, rows);

  nmt::ModelConfig mc = c.model;
  mc.src_vocab = sv.size(), mc.tgt_vocab = tv.size(), mc.pad_id = nmt::Vocabulary::kPad;
  Generator init_gen(c.seed);
  nmt::NmtModel model(mc, init_gen, dtype);
  model.train();

  StateDict out;
  std::vector<Variable> params;
  for (const auto& [name, v] : model.named_parameters()) {
    out.tensors[nmt::checkpoint_name(name)] = v.data().clone();
    params.push_back(v);
  }
  FlatParameters flat(params, Device::cpu());
  flat.zero_grad();

  // The training path (NmtTask::forward_backward): the generator fused with its loss.
  CrossEntropy ce = model.forward_loss(batch.src, lengths_of(batch.src_lengths), batch.tgt_in, batch.tgt_out);
  ce.loss.backward();
  for (const auto& [name, v] : model.named_parameters()) out.tensors[entry("grad", name)] = v.grad().clone();

  // The trainer's update (framework/train/trainer.cpp): token-averaged gradient, clipped, one optimizer step.
  const double norm = average_and_clip_(flat.grad(), ce.tokens, c.optim.clip_norm).norm;
  const OptimizerOptions oo = optimizer_options(c.optim);
  make_optimizer(c.optim.name, oo)->step(flat, c.optim.lr);
  for (const auto& [name, v] : model.named_parameters()) out.tensors[entry("updated", name)] = v.data().clone();

  out.tensors["batch/src"] = batch.src, out.tensors["batch/src_lengths"] = batch.src_lengths;
  out.tensors["batch/tgt_in"] = batch.tgt_in, out.tensors["batch/tgt_out"] = batch.tgt_out;
  out.floats["step/loss"] = ce.loss.data().item();
  out.ints["step/tokens"] = ce.tokens;
  out.floats["step/grad_norm"] = norm;
  write_config(mc, c, out);
  out.strings["config"] = loaded.config.dump();
  save_checkpoint(a.out, out, {{"dtype", a.dtype}, {"written_by", "luong dump-step"}});
  std::cout << "wrote " << a.out << ": " << params.size() << " parameters, batch " << n << " x "
            << batch.src.size(1) << " -> " << batch.tgt_in.size(1) << ", loss " << ce.loss.data().item() << " over "
            << ce.tokens << " tokens, grad norm " << norm << "\n";
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto a = std::make_shared<DumpStepArgs>();
  auto* cmd = app.add_subcommand("dump-step",
                                 "Write one training step (parameters, batch, loss, gradients, update "
                                 "at optim.lr, no schedule) of a fresh model to HDF5 for a reference "
                                 "implementation to check");
  cmd->add_option("--config,-c", a->config, "YAML config file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--set", a->sets, "Override a config key: --set section.key=value (repeatable)");
  cmd->add_option("--out,-o", a->out, "Output HDF5 file (a new file unless --force; its directory must exist)")
      ->required();
  cmd->add_flag("--force", a->force, "Replace --out if it exists");
  cmd->add_option("--batch", a->batch, "Sentence pairs in the batch, >= 1 (the first ones of the training data)")
      ->capture_default_str();
  cmd->add_option("--dtype", a->dtype, "float32 or float64 (parameters and arithmetic)")->capture_default_str();
  cmd->callback([a] { run(*a); });
});

}  // namespace
}  // namespace luong::cli
