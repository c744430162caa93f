// The NMT config: the schema of every key a luong run reads (types, defaults, documentation, checks) and the
// typed struct the trainer consumes. configs/README.md is generated from nmt_schema() (`luong config --doc`).
//
// Keys naming a registered component (model.attention, model.attention_score, model.init, optim.schedule)
// accept any non-empty name until the caller installs the registry's list, e.g.
//   ConfigSchema s = nmt_schema();
//   s.at("model.attention").registered = [] { return attention_registry_names(); };
// after which an unknown name is an error that lists the registered ones.
#pragma once
#include <cstdint>
#include <string>

#include "framework/io/config.h"
#include "models/nmt/model_config.h"

namespace luong::nmt {

struct DataConfig {
  std::string train_src, train_tgt;   // data.train_*: required for training
  std::string valid_src, valid_tgt;   // data.valid_*: "" = no validation
  std::string test_src, test_tgt;     // data.test_*: "" = none
  int64_t src_vocab_size = 8000;      // including the four specials
  int64_t tgt_vocab_size = 8000;
  int64_t min_freq = 1;
  bool lowercase = false;
  int64_t bpe_merges = 0;             // BPE merges learned on the training text; 0 = words
  bool bpe_joint = true;              // learned on both sides' words together, or bpe_merges per side
  std::string bpe_codes;              // or BPE merges read from this file ("" = none)
  std::string bpe_codes_tgt;          // the target's merges from this file (bpe_codes then the source's only)
  int64_t max_len = 50;               // training pairs with more tokens on either side are skipped
  int64_t pool_batches = 100;         // batches per length-sorting pool
  std::string sort_by = "longer_side";  // longer_side | source (data/batching.h, SortKey)
};

struct TrainConfig {
  int64_t batch_size = 64;            // sentences or tokens per batch per rank (see batch_by)
  std::string batch_by = "sentences"; // sentences | tokens
  int64_t accumulate = 1;             // batches (parts of a global batch) summed per optimizer step
  int64_t max_steps = 0;              // 0 = no step limit
  int64_t max_epochs = 10;            // 0 = no epoch limit
  int64_t valid_every = 0;            // steps; 0 = at the end of every epoch
  int64_t log_every = 50;             // steps
  int64_t checkpoint_every = 0;       // steps; 0 = after every validation
  double checkpoint_minutes = 0.0;    // also save when this much wall time has passed since the last save; 0 = off
  int64_t keep_checkpoints = 3;       // 0 = keep all
  bool tensorboard = false;           // metrics also as TensorBoard scalars in the run directory
  int64_t early_stopping = 0;         // patience in validations; 0 = off
  bool valid_bleu = false;            // BLEU of the validation set at each validation
  bool valid_translations = false;    // and its translations kept in the run directory
  std::string valid_metric = "ppl";   // ppl | bleu | chrf: what picks best.h5, drives early stopping / plateau
  // Validations translate the validation set and score it with BLEU and chrF (asked for, or the metric needs it).
  bool scores_valid_translations() const { return valid_bleu || valid_metric != "ppl"; }
  double label_smoothing = 0.0;
  int64_t max_bad_steps = 5;          // consecutive non-finite losses before the run stops
  std::string precision = "fp32";     // fp32 | tf32 | bf16: float32 GEMMs (framework/core/precision.h)
  std::string init_from;              // a checkpoint whose parameters the run starts from; "" = fresh
  std::string init_vocabulary = "checkpoint";  // checkpoint | data: whose vocabularies a started run reads with
  std::string init_skip;                       // parts a started run draws instead of loading ("decoder, ...")
  std::string freeze;                          // parts training leaves as they are
};

struct OptimConfig {
  std::string name = "adam";          // sgd | adam
  double lr = 1e-3;
  double clip_norm = 5.0;             // global gradient-norm clip; 0 = off
  double weight_decay = 0.0;
  double momentum = 0.0;   // sgd: heavy-ball momentum; 0 = plain SGD
  double ema_decay = 0.0;  // exponential moving average of the parameters; 0 = off
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  std::string schedule = "constant";  // luong | plateau | warmup | constant (registered names)
  int64_t decay_start = 8;            // luong: halve after every epoch > decay_start
  double decay_factor = 0.5;
  int64_t warmup_steps = 0;
  int64_t plateau_patience = 1;
};

struct DistConfig {
  std::string backend = "auto";       // auto | mpi | nccl
  double bucket_mb = 25.0;
  int64_t timeout_s = 300;
  int64_t check_every = 0;            // steps between cross-rank weight checks; 0 = off
};

struct EvalConfig {
  int64_t beam_size = 5;
  double length_penalty = 0.0;
  double max_len_ratio = 2.0;
  int64_t batch_size = 32;  // sentences decoded together (speed only)
  int chrf_word_order = 0;  // 2: validation and luong eval score chrF2++
};

struct NmtConfig {
  uint64_t seed = 1234;
  std::string device = "cpu";         // cpu | cuda | cuda:N
  ModelConfig model;                  // src_vocab/tgt_vocab/pad_id are left for the vocabulary to fill
  DataConfig data;
  TrainConfig train;
  OptimConfig optim;
  DistConfig dist;
  EvalConfig eval;
};

// The schema of every NMT key. A fresh copy each call, so callers may install registry validators.
ConfigSchema nmt_schema();
// Reads the typed struct from a resolved config; checks rules that involve several keys.
NmtConfig nmt_config_from(const Config& config);
// The reference document (configs/README.md).
std::string nmt_config_reference();
// Whether a key is one of the model.* keys that decide which network a checkpoint's parameters belong to: all
// but model.dropout, model.init and model.init_range (training-time regularisation, and how fresh weights were
// drawn). `luong average` requires them equal in its inputs, train.init_from between the checkpoint and the run.
bool describes_the_network(const std::string& key);

}  // namespace luong::nmt
