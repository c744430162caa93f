#include "models/nmt/nmt_config.h"

#include <limits>

#include "framework/core/error.h"

namespace luong::nmt {
namespace {

std::string check_device(const ConfigValue& v) {
  const std::string& s = std::get<std::string>(v);
  if (s == "cpu" || s == "cuda") return "";
  if (s.rfind("cuda:", 0) == 0 && s.size() > 5 && s.find_first_not_of("0123456789", 5) == std::string::npos)
    return "";
  return "'" + printable_excerpt(s) + "' is not a device (expected cpu, cuda or cuda:N)";
}

std::string check_non_empty(const ConfigValue& v) {
  return std::get<std::string>(v).empty() ? "a name is required" : "";
}

KeySpec& bounded(KeySpec& k, std::optional<double> lo, std::optional<double> hi = std::nullopt) {
  k.min = lo;
  k.max = hi;
  return k;
}

// lo < value <= hi: for rates and factors where 0 would stop training altogether.
KeySpec& positive(KeySpec& k, std::optional<double> hi = std::nullopt) {
  bounded(k, 0.0, hi).min_exclusive = true;
  return k;
}

void add_top_and_model(ConfigSchema& s) {
  bounded(s.add_int("seed", 1234, "Seed of every random stream: initialisation, dropout, data shuffling."), 0);
  s.add_string("device", "cpu", "Where the model runs: cpu, cuda (device 0) or cuda:N.").check = check_device;

  // Capped like the sizes below: far above any stack that trains (the paper's is 4), below the counts whose
  // construction would run until memory is exhausted.
  bounded(s.add_int("model.layers", 2, "Stacked LSTM layers in the encoder and in the decoder."), 1, 1000);
  // Sizes are capped far above any model that fits in memory, so that products of sizes (a 4H x (E + H)
  // gate matrix) cannot overflow int64 and fail as a negative tensor size.
  bounded(s.add_int("model.hidden_size", 256, "LSTM hidden units (and attentional vector size)."), 1, 65536);
  bounded(s.add_int("model.embedding_size", 256, "Word embedding size (source and target)."), 1, 65536);
  bounded(s.add_number("model.dropout", 0.2, "Dropout probability between LSTM layers and on h~ before the "
                                             "output layer (Zaremba et al. 2014 style, as in Luong et al. 2015)."),
          0.0, 0.99);
  s.add_string("model.attention", "general",
               "Attention variant, a registered name (see `luong list`): global attention with the dot, general or "
               "concat score, or local-m / local-p (Luong et al. 2015, sec. 3), which score with "
               "model.attention_score.")
      .check = check_non_empty;
  s.add_string("model.attention_score", "general",
               "Score function used by the local variants (dot, general, concat); a registered name.")
      .check = check_non_empty;
  bounded(s.add_int("model.attention_window", 10, "Half-width D of the local attention window [p_t - D, p_t + D]."),
          1);
  s.add_bool("model.input_feeding", true, "Feed h~_{t-1} into the decoder input at step t (Luong et al. 2015, sec. 3.3).");
  s.add_bool("model.reverse_source", false, "Reverse the source sentence before encoding (Sutskever et al. 2014).");
  s.add_bool("model.bidirectional_encoder", false, "Make the first encoder layer bidirectional.");
  s.add_bool("model.tie_embeddings", false, "Share the target embedding matrix with the output projection "
                                            "(requires embedding_size == hidden_size).");
  s.add_string("model.init", "uniform", "Parameter initialiser, a registered name (e.g. uniform).").check =
      check_non_empty;
  bounded(s.add_number("model.init_range", 0.1, "Uniform initialisation range: parameters drawn from [-r, r]."), 0.0);
}

void add_data(ConfigSchema& s) {
  const std::string rel = " Relative paths are resolved against the current working directory.";
  s.add_string("data.train_src", "", "Training source text, one sentence per line (plain UTF-8)." + rel);
  s.add_string("data.train_tgt", "", "Training target text, line-aligned with train_src." + rel);
  s.add_string("data.valid_src", "", "Validation source text; empty = no validation." + rel);
  s.add_string("data.valid_tgt", "", "Validation target text, line-aligned with valid_src." + rel);
  s.add_string("data.test_src", "", "Test source text (used by `luong eval`); empty = none." + rel);
  s.add_string("data.test_tgt", "", "Test reference text, line-aligned with test_src." + rel);
  bounded(s.add_int("data.src_vocab_size", 8000, "Maximum source vocabulary size, the four specials "
                                                 "<pad> <unk> <s> </s> included; most frequent tokens are kept."),
          5);
  bounded(s.add_int("data.tgt_vocab_size", 8000, "Maximum target vocabulary size, specials included."), 5);
  bounded(s.add_int("data.min_freq", 1, "Tokens seen fewer times than this in training data map to <unk>."), 1);
  s.add_bool("data.lowercase", false, "Lowercase text before tokenising (output is then lowercase too).");
  bounded(s.add_int("data.bpe_merges", 0,
                    "Subword units: learn this many byte-pair-encoding merges (Sennrich et al. 2016) jointly on the "
                    "training source and target words (or on each side's words apart: data.bpe_joint), and split "
                    "every word into the units they make (pieces joined by `￭`, undone when detokenising); fewer "
                    "when no pair is left that occurs twice. The vocabularies are built from the pieces and "
                    "data.max_len counts them. The merges are stored in checkpoints and the run directory "
                    "(bpe.merges.txt; bpe.src.merges.txt and bpe.tgt.merges.txt per side). 0 = whole words."),
          0, 10000000);
  s.add_bool("data.bpe_joint", true,
             "How data.bpe_merges are learned: one list on the source and target words together (true: a name or "
             "a cognate is split alike on both sides, the usual choice for languages that share an alphabet), or "
             "data.bpe_merges merges on each side's words apart, each side split by its own (false: for pairs "
             "that share few words, such as other scripts, where joint merges go to pieces one side never uses). "
             "Files of merges per side: data.bpe_codes with data.bpe_codes_tgt.");
  s.add_string("data.bpe_codes", "",
               "Subword units from a file of merges instead of learning them: one \"left right\" pair per line in "
               "the order they apply, a word's last symbol marked `</w>`. A run's bpe.merges.txt (to train "
               "another run on the same units), or the codes of subword-nmt's learn-bpe (version 0.2; its "
               "\"#version\" line is skipped). The merges are stored with the run as learned ones are. Empty = "
               "none; at most one of data.bpe_merges and data.bpe_codes is set." +
                   rel);
  s.add_string("data.bpe_codes_tgt", "",
               "The target side's merges from this file (same format), data.bpe_codes then splitting the source "
               "side only: per-side subword units read from files (a run's bpe.src.merges.txt and "
               "bpe.tgt.merges.txt, or subword-nmt codes learned on each side). Empty = data.bpe_codes splits "
               "both sides." +
                   rel);
  bounded(s.add_int("data.max_len", 50,
                    "Training pairs with more tokens than this on either side are skipped "
                    "(and counted in the log). The vocabularies are built from every training "
                    "line, these included; validation pairs are never skipped."),
          1);
  // pool_batches x train.batch_size x ranks is the pool's budget (int64): both are capped so it cannot overflow.
  bounded(s.add_int("data.pool_batches", 100, "Length bucketing: examples are sorted by length within pools of "
                                              "this many batches, then the batch order is shuffled."),
          1, 100000);
  s.add_choice("data.sort_by", "longer_side", {"longer_side", "source"},
               "How a pool is sorted. longer_side: by the longer side of a pair (max(source tokens, target tokens "
               "+ 1), what a batch pads to), then target, then source length; it pads least, as the decoder and "
               "the generator do most of a step's work. source: by source length, then target length (the "
               "order before this key existed; a resumed run keeps the order its checkpoint was made with).");
}

void add_train(ConfigSchema& s) {
  bounded(s.add_int("train.batch_size", 64, "Batch size per rank, in sentences or tokens (see batch_by); with N "
                                            "ranks the global batch is N times larger."),
          1, 100000000);
  s.add_choice("train.batch_by", "sentences", {"sentences", "tokens"},
               "Unit of batch_size; tokens counts padded positions: sentences x max(src_len, tgt_len + 1).");
  bounded(s.add_int("train.accumulate", 1,
                    "Gradient accumulation: batches of batch_size whose gradients are summed before each optimizer "
                    "step, so a step trains on batch_size x ranks x accumulate while holding the activations of one "
                    "batch_size. One process with accumulate N takes the same steps as N processes (dropout "
                    "included, up to float rounding)."),
          1, 10000);
  bounded(s.add_int("train.max_steps", 0, "Stop after this many optimizer steps; 0 = no step limit."), 0);
  bounded(s.add_int("train.max_epochs", 10, "Stop after this many epochs; 0 = no epoch limit."), 0);
  bounded(s.add_int("train.valid_every", 0, "Validate every this many steps; 0 = at the end of every epoch."), 0);
  bounded(s.add_int("train.log_every", 50, "Print a progress line every this many steps."), 1);
  bounded(s.add_int("train.checkpoint_every", 0, "Save a checkpoint every this many steps; 0 = after every "
                                                 "validation."),
          0);
  bounded(s.add_number("train.checkpoint_minutes", 0.0,
                       "Also save a checkpoint once this many minutes have passed since the last one was saved (or "
                       "the run started): the most training a killed job or a lost node can cost, however rarely "
                       "train.checkpoint_every and the validations save. Under mpirun rank 0's clock decides, in the "
                       "step's all-reduce; 0 = off."),
          0.0, 525600.0);
  bounded(s.add_int("train.keep_checkpoints", 3, "Keep the newest this many step checkpoints (the best one is "
                                                 "always kept); 0 = keep all."),
          0);
  s.add_bool("train.tensorboard", false,
             "Also write the metrics.jsonl records as TensorBoard scalars (train/loss, valid/ppl, ...) to an "
             "events.out.tfevents.* file in the run directory: `tensorboard --logdir <run dir>`.");
  bounded(s.add_int("train.early_stopping", 0, "Stop after this many validations without improvement; 0 = off."),
          0);
  s.add_bool("train.valid_bleu", false,
             "At each validation also translate data.valid_src with the eval.* decoding settings and score it "
             "against data.valid_tgt with BLEU and chrF (as `luong eval` does): valid_bleu and valid_chrf in "
             "metrics.jsonl and the validation line. Costs a decoding pass per validation; training is unchanged.");
  s.add_bool("train.valid_translations", false,
             "With validation scoring (train.valid_bleu, or train.valid_metric bleu or chrf), also write each "
             "validation's translations to valid_translations/step-<N>.txt in the run directory, one line per "
             "line of data.valid_src: to read how the model's output changes, or to test two steps' difference "
             "with `luong bleu REF -i A B --paired-bs`.");
  s.add_choice("train.valid_metric", "ppl", {"ppl", "bleu", "chrf"},
               "The validation result that picks best.h5 and drives train.early_stopping and the plateau "
               "schedule: ppl (lower is better), bleu or chrf (higher is better; either translates and scores "
               "the validation set at every validation whatever train.valid_bleu says).");
  bounded(s.add_number("train.label_smoothing", 0.0,
                       "Label smoothing epsilon of the cross-entropy loss. The training loss (and the ppl of the "
                       "progress line and train records) is then the smoothed loss; validation is not smoothed."),
          0.0, 0.99);
  bounded(s.add_int("train.max_bad_steps", 5, "Stop after this many consecutive steps with a NaN/Inf loss (such "
                                              "steps are skipped)."),
          1);
  s.add_choice(
      "train.precision", "fp32", {"fp32", "tf32", "bf16"},
      "Precision of the float32 GEMMs (matmuls, LSTM gate projections, output layer), forward and "
      "backward: fp32 (full float32), tf32 (inputs rounded to a 10-bit mantissa) or bf16 (inputs rounded "
      "to bfloat16), always with float32 accumulation. Parameters, gradients, optimizer state and "
      "activations stay float32. CUDA uses tensor cores; a CPU runs bf16 on AMX tiles (Intel) or "
      "AVX512-BF16 (AMD Zen 4 and later) and otherwise emulates the rounding, as it always does for tf32 (slower than "
      "fp32: for testing and CPU/GPU agreement). `luong eval` / `translate` use the checkpoint's value. "
      "See docs/MIXED_PRECISION.md.");
  s.add_string("train.init_from", "",
               "A checkpoint whose parameters a new run starts from instead of model.init's draws (a run's "
               "ckpt-<step>.h5 or best.h5, or the output of `luong average`): fine-tuning on other data, or another "
               "stage with a new optimizer or schedule. The checkpoint's vocabularies and subword units are used "
               "unless train.init_vocabulary says otherwise (data.src_vocab_size, data.tgt_vocab_size, "
               "data.min_freq and data.bpe_* then have no effect); the model.* keys must describe the same network "
               "(model.dropout, model.init and model.init_range may differ) and data.lowercase must be the same. The "
               "optimizer state, schedule, step count and data "
               "position start from zero. A resumed run continues from its own checkpoints alone (the file may be "
               "gone by then, but the key must stay set), and a run that began without this key ignores it on "
               "resume. Empty = a freshly drawn model. Relative paths are resolved against the "
               "current working directory.");
  s.add_choice("train.init_vocabulary", "checkpoint", {"checkpoint", "data"},
               "Where a run started with train.init_from takes its vocabularies and subword units. checkpoint: the "
               "starting checkpoint's, every parameter as it is. data: built from this run's training data as a "
               "fresh run builds them (the data.* keys apply; data.lowercase may differ from the checkpoint's run): "
               "the embedding rows, output columns and output biases of tokens both vocabularies hold are the "
               "checkpoint's, those of new tokens drawn by model.init, every other parameter the checkpoint's. For "
               "fine-tuning on a domain with words the first run never saw (OpenNMT-py's update_vocab), or another "
               "source language from a trained parent (Zoph et al. 2016). A resumed run continues as it began.");
  s.add_string("train.init_skip", "",
               "Parts of the model that a run started with train.init_from draws by model.init instead of taking "
               "from the checkpoint: a comma-separated list of module paths or parameter names as luong names them "
               "(the checkpoint's model/ group with dots: decoder, decoder.output, encoder.lstm.1, "
               "decoder.attention). decoder keeps the trained encoder alone (fairseq's "
               "--load-pretrained-encoder-from); decoder.output gives a new output layer. A name that is no part "
               "of the model is an error. Empty = every parameter from the checkpoint.");
  s.add_string("train.freeze", "",
               "Parts of the model that training leaves exactly as they are, named as train.init_skip names them "
               "(a comma-separated list: encoder, decoder.embedding, encoder.embedding): backward computes no "
               "gradient for them (nor, for a frozen encoder, any of its backward), and the optimizer updates the "
               "other parameters only (no weight decay reaches them). "
               "With train.init_from: keep a trained encoder while the decoder learns, or fix embeddings "
               "(Marian's --embedding-fix-src / --embedding-fix-trg). Freezing every parameter is an error. Empty = "
               "everything trains.");
}

void add_optim(ConfigSchema& s) {
  s.add_choice("optim.name", "adam", {"sgd", "adam"}, "Optimizer: plain SGD (the paper) or Adam.");
  positive(s.add_number("optim.lr", 0.001, "Learning rate (the paper: SGD with 1.0)."));
  bounded(s.add_number("optim.clip_norm", 5.0, "Rescale gradients whose global L2 norm exceeds this; 0 = off."), 0.0);
  bounded(s.add_number("optim.weight_decay", 0.0,
                       "Weight decay coefficient: decoupled from the gradient for adam "
                       "(AdamW: p -= lr * wd * p), an L2 term added to the gradient for sgd."),
          0.0);
  // Below 1, as the optimizer requires (at 1 the velocity would never decay).
  bounded(s.add_number(
              "optim.momentum", 0.0,
              "sgd: heavy-ball momentum (m = momentum * m + g; param -= lr * m, as PyTorch's SGD); 0 = plain "
              "SGD, the paper's. Its velocity is saved in checkpoints (optim/momentum). Only with optim.name sgd."),
          0.0, 0.999999);
  // Below 1: at 1 the average would never move from the first step's parameters.
  bounded(s.add_number("optim.ema_decay", 0.0,
                       "Exponential moving average of the parameters (Polyak averaging; Marian's exponential "
                       "smoothing): after each step average += (1 - d) (param - average), d = min(ema_decay, "
                       "(1 + n) / (10 + n)) at the n-th update. Validations, best.h5 and every checkpoint's model "
                       "(what eval, translate, average and train.init_from read) are the average; training "
                       "continues from the parameters themselves, also on resume. The average spans about "
                       "1 / (1 - ema_decay) steps: keep that well below the run's length (0.99 for a few thousand "
                       "steps, 0.9999 for hundreds of thousands). 0 = off."),
          0.0, 0.999999);
  bounded(s.add_number("optim.beta1", 0.9, "Adam beta1."), 0.0, 0.999999);
  bounded(s.add_number("optim.beta2", 0.999, "Adam beta2."), 0.0, 0.999999999);
  positive(s.add_number("optim.eps", 1e-8, "Adam epsilon."));
  s.add_string("optim.schedule", "constant",
               "Learning-rate schedule, a registered name: luong (halve every epoch after decay_start), plateau "
               "(multiply by decay_factor when validation perplexity stops improving), warmup (linear warmup then "
               "inverse square root), constant.")
      .check = check_non_empty;
  bounded(s.add_int("optim.decay_start", 8,
                    "luong schedule: epochs 1 to K run at optim.lr, epoch e > K at "
                    "optim.lr * decay_factor^(e - K) (the paper: K = 8 of 12; K = 0 decays "
                    "from the first epoch)."),
          0);
  positive(s.add_number("optim.decay_factor", 0.5, "Multiplier applied at each decay (plateau schedule: below 1)."),
           1.0);
  bounded(s.add_int("optim.warmup_steps", 0, "warmup schedule: steps of linear warmup (at least 1 with that "
                                             "schedule)."),
          0);
  bounded(s.add_int("optim.plateau_patience", 1, "plateau schedule: validations without improvement before a "
                                                 "decay (at least 1 with that schedule)."),
          0);
}

void add_dist_eval(ConfigSchema& s) {
  s.add_choice("dist.backend", "auto", {"auto", "mpi", "nccl"},
               "Gradient all-reduce backend: auto picks nccl for CUDA devices when available, else mpi.");
  // Converted to bytes as int64: an unbounded value would overflow the conversion.
  bounded(s.add_number("dist.bucket_mb", 25.0, "Size of gradient all-reduce buckets in MiB."), 0.001, 1048576.0);
  // Converted to a std::chrono duration in ms (then ns for the deadline): values near int64's top overflowed to
  // a negative timeout that fired at once on every rank. One week is more than any collective needs; the
  // LUONG_DIST_TIMEOUT_S environment variable has the same cap (framework/dist/process_group.cpp).
  bounded(s.add_int("dist.timeout_s", 300, "Seconds a collective may wait before the run fails naming the rank "
                                           "(604800 = one week at most); takes precedence over the "
                                           "LUONG_DIST_TIMEOUT_S environment variable."),
          1, 604800);
  bounded(s.add_int("dist.check_every", 0, "Every this many steps, check that all ranks hold identical weights; "
                                           "0 = off."),
          0);
  // Beam search sizes its work as sentences x beam x vocabulary (int64): a huge beam overflowed it. The cap
  // is the one of `luong eval/translate --beam` (kMaxBeam in launch/translate_util.h).
  bounded(s.add_int("eval.beam_size", 5, "Beam width of beam search (1 = greedy)."), 1, 256);
  bounded(s.add_number("eval.length_penalty", 0.0, "Hypothesis score is log P / length^alpha with alpha = this; 0 "
                                                   "= raw log-probability."),
          0.0);
  // ratio x source length is converted to an int64 length: 1e19 overflowed it.
  bounded(s.add_number("eval.max_len_ratio", 2.0, "Maximum output length as a multiple of the source length."),
          0.1, 100.0);
  bounded(s.add_int("eval.batch_size", 32,
                    "Sentences decoded together by validation BLEU (train.valid_bleu) "
                    "and, unless --batch-size is given, by `luong eval` and `luong "
                    "translate`. Speed only: translations do not depend on it; larger "
                    "batches keep a GPU busier and hold batch x beam x vocabulary scores."),
          1);
  bounded(s.add_int("eval.chrf_word_order", 0,
                    "Word n-gram order of chrF in validation scoring (train.valid_bleu, train.valid_metric: chrf) "
                    "and, unless --chrf-word-order is given, `luong eval`: 0 = chrF2, 2 = chrF2++ (Popovic 2017; "
                    "word 1- and 2-grams too)."),
          0, 2);
}

// Rules of one schedule or optimizer on keys that others ignore (the constructors check them again, too late
// for `luong config` and `sweep --dry-run`, and with internal check text).
void check_optim(const OptimConfig& o) {
  if (o.schedule == "warmup" && o.warmup_steps < 1)
    LUONG_FAIL("config: optim.warmup_steps: value ", o.warmup_steps, " is out of range [1, ",
               std::numeric_limits<int64_t>::max(), "] with optim.schedule warmup (set the warmup length)");
  if (o.schedule == "plateau" && !(o.decay_factor < 1.0))
    LUONG_FAIL("config: optim.decay_factor: value ", value_to_yaml(o.decay_factor),
               " is out of range (0, 1) with optim.schedule plateau (1 would never decay)");
  if (o.schedule == "plateau" && o.plateau_patience < 1)
    LUONG_FAIL("config: optim.plateau_patience: value ", o.plateau_patience, " is out of range [1, ",
               std::numeric_limits<int64_t>::max(), "] with optim.schedule plateau");
  // Adam has a momentum of its own (beta1): a momentum set for it would be ignored without a word.
  if (o.momentum > 0 && o.name != "sgd")
    LUONG_FAIL("config: optim.momentum: ", value_to_yaml(o.momentum), " is for optim.name sgd; ", o.name,
               " keeps its own (optim.beta1 for adam)");
}

}  // namespace

ConfigSchema nmt_schema() {
  ConfigSchema s;
  add_top_and_model(s);
  add_data(s);
  add_train(s);
  add_optim(s);
  add_dist_eval(s);
  // No NMT number has a use for .inf or .nan: each would only fail later, inside training or decoding.
  for (const auto& k : std::vector<KeySpec>(s.keys()))
    if (k.type == ValueType::number) s.at(k.path).finite = true;
  return s;
}

bool describes_the_network(const std::string& key) {
  return key.rfind("model.", 0) == 0 && key != "model.dropout" && key != "model.init" && key != "model.init_range";
}

NmtConfig nmt_config_from(const Config& c) {
  NmtConfig n;
  n.seed = static_cast<uint64_t>(c.get_int("seed"));
  n.device = c.get_string("device");
  ModelConfig& m = n.model;
  m.layers = c.get_int("model.layers");
  m.hidden_size = c.get_int("model.hidden_size");
  m.embedding_size = c.get_int("model.embedding_size");
  m.dropout = c.get_number("model.dropout");
  m.attention = c.get_string("model.attention");
  m.attention_score = c.get_string("model.attention_score");
  m.attention_window = c.get_int("model.attention_window");
  m.input_feeding = c.get_bool("model.input_feeding");
  m.reverse_source = c.get_bool("model.reverse_source");
  m.bidirectional_encoder = c.get_bool("model.bidirectional_encoder");
  m.tie_embeddings = c.get_bool("model.tie_embeddings");
  m.init = c.get_string("model.init");
  m.init_range = c.get_number("model.init_range");
  if (m.tie_embeddings && m.embedding_size != m.hidden_size)
    LUONG_FAIL("config: model.tie_embeddings needs model.embedding_size (", m.embedding_size,
               ") == model.hidden_size (", m.hidden_size, ")");
  if (m.bidirectional_encoder && m.hidden_size % 2 != 0)
    LUONG_FAIL("config: model.bidirectional_encoder needs an even model.hidden_size (each direction has half), got ",
               m.hidden_size);

  DataConfig& d = n.data;
  d.train_src = c.get_string("data.train_src");
  d.train_tgt = c.get_string("data.train_tgt");
  d.valid_src = c.get_string("data.valid_src");
  d.valid_tgt = c.get_string("data.valid_tgt");
  d.test_src = c.get_string("data.test_src");
  d.test_tgt = c.get_string("data.test_tgt");
  if (d.valid_src.empty() != d.valid_tgt.empty())
    LUONG_FAIL("config: data.valid_src and data.valid_tgt must both be set or both be empty");
  if (d.test_src.empty() != d.test_tgt.empty())
    LUONG_FAIL("config: data.test_src and data.test_tgt must both be set or both be empty");
  d.src_vocab_size = c.get_int("data.src_vocab_size");
  d.tgt_vocab_size = c.get_int("data.tgt_vocab_size");
  d.min_freq = c.get_int("data.min_freq");
  d.lowercase = c.get_bool("data.lowercase");
  d.bpe_merges = c.get_int("data.bpe_merges");
  d.bpe_joint = c.get_bool("data.bpe_joint");
  d.bpe_codes = c.get_string("data.bpe_codes");
  d.bpe_codes_tgt = c.get_string("data.bpe_codes_tgt");
  if (d.bpe_merges > 0 && !d.bpe_codes.empty())
    LUONG_FAIL(
        "config: data.bpe_merges (", d.bpe_merges, ") and data.bpe_codes ('", d.bpe_codes,
        "') are both set: learn the merges or read them from the file, not both (data.bpe_merges: 0 reads the file)");
  if (!d.bpe_codes_tgt.empty() && d.bpe_codes.empty())
    LUONG_FAIL("config: data.bpe_codes_tgt ('", d.bpe_codes_tgt, "') is set but data.bpe_codes is not: per-side ",
               "merges read from files need the source's in data.bpe_codes");
  if (!d.bpe_joint && !d.bpe_codes.empty() && d.bpe_codes_tgt.empty())
    LUONG_FAIL("config: data.bpe_joint is false but data.bpe_codes ('", d.bpe_codes, "') is one file for both ",
               "sides: name the target's merges in data.bpe_codes_tgt (data.bpe_joint applies to learned merges)");
  d.max_len = c.get_int("data.max_len");
  d.pool_batches = c.get_int("data.pool_batches");
  d.sort_by = c.get_string("data.sort_by");

  TrainConfig& t = n.train;
  t.batch_size = c.get_int("train.batch_size");
  t.batch_by = c.get_string("train.batch_by");
  t.accumulate = c.get_int("train.accumulate");
  t.max_steps = c.get_int("train.max_steps");
  t.max_epochs = c.get_int("train.max_epochs");
  if (t.max_steps == 0 && t.max_epochs == 0)
    LUONG_FAIL("config: train.max_steps and train.max_epochs are both 0; set at least one so training ends");
  t.valid_every = c.get_int("train.valid_every");
  t.log_every = c.get_int("train.log_every");
  t.checkpoint_every = c.get_int("train.checkpoint_every");
  t.checkpoint_minutes = c.get_number("train.checkpoint_minutes");
  t.keep_checkpoints = c.get_int("train.keep_checkpoints");
  t.tensorboard = c.get_bool("train.tensorboard");
  t.early_stopping = c.get_int("train.early_stopping");
  t.valid_bleu = c.get_bool("train.valid_bleu");
  t.valid_translations = c.get_bool("train.valid_translations");
  t.valid_metric = c.get_string("train.valid_metric");
  t.label_smoothing = c.get_number("train.label_smoothing");
  t.max_bad_steps = c.get_int("train.max_bad_steps");
  t.precision = c.get_string("train.precision");
  t.init_from = c.get_string("train.init_from");
  t.init_vocabulary = c.get_string("train.init_vocabulary");
  t.init_skip = c.get_string("train.init_skip");
  t.freeze = c.get_string("train.freeze");

  OptimConfig& o = n.optim;
  o.name = c.get_string("optim.name");
  o.lr = c.get_number("optim.lr");
  o.clip_norm = c.get_number("optim.clip_norm");
  o.weight_decay = c.get_number("optim.weight_decay");
  o.ema_decay = c.get_number("optim.ema_decay");
  o.momentum = c.get_number("optim.momentum");
  o.beta1 = c.get_number("optim.beta1");
  o.beta2 = c.get_number("optim.beta2");
  o.eps = c.get_number("optim.eps");
  o.schedule = c.get_string("optim.schedule");
  o.decay_start = c.get_int("optim.decay_start");
  o.decay_factor = c.get_number("optim.decay_factor");
  o.warmup_steps = c.get_int("optim.warmup_steps");
  o.plateau_patience = c.get_int("optim.plateau_patience");
  check_optim(o);

  n.dist.backend = c.get_string("dist.backend");
  n.dist.bucket_mb = c.get_number("dist.bucket_mb");
  n.dist.timeout_s = c.get_int("dist.timeout_s");
  n.dist.check_every = c.get_int("dist.check_every");
  n.eval.beam_size = c.get_int("eval.beam_size");
  n.eval.length_penalty = c.get_number("eval.length_penalty");
  n.eval.max_len_ratio = c.get_number("eval.max_len_ratio");
  n.eval.batch_size = c.get_int("eval.batch_size");
  n.eval.chrf_word_order = static_cast<int>(c.get_int("eval.chrf_word_order"));
  return n;
}

std::string nmt_config_reference() {
  return nmt_schema().reference_markdown(
      "luong configuration reference",
      "Generated by `luong config --doc` from the schema in models/nmt/nmt_config.cpp; do not edit by hand.\n\n"
      "A config is a YAML file with the sections below; every key is optional and takes its default when absent. "
      "An unknown key, a key given twice, a value of the wrong type or out of its range (numbers must be finite) is "
      "an error naming the file, line and key. Any key can be overridden on the "
      "command line with `--set section.key=value` (the value is read as a YAML scalar). `luong config --config F "
      "[--set k=v ...]` prints the resolved config with every default filled in; the trainer writes the same text "
      "to the run directory.\n\n"
      "Relative data paths are resolved against the current working directory (run from the repository root).\n\n"
      "Text files are UTF-8 (or gzip-compressed UTF-8, recognised by its first bytes), one sentence per line, "
      "source and target line-aligned; a pair with an empty "
      "side is skipped and counted. Text is tokenised by luong's reversible tokenizer (documented in "
      "models/nmt/data/tokenizer.h): split on whitespace, punctuation separated from words with the joiner mark "
      "`￭` on the punctuation side, so translations detokenise to normal spacing; `data.lowercase` lowercases "
      "first, and `data.bpe_merges` splits words into subword units (models/nmt/data/bpe.h; joint or per side, "
      "models/nmt/data/subwords.h). Batching "
      "(models/nmt/data/batching.h) sorts examples by length (`data.sort_by`) within pools of "
      "`data.pool_batches` batches and shuffles the batch order from `seed` and the epoch.\n\n"
      "Configs shipped in this directory: `tiny.yaml` (toy task from `luong gen-data --out data/toy`, used by "
      "tests), `multi30k.yaml` (English to German on Multi30k, the main job; fetch the data with "
      "`tools/get-data multi30k`), `wmt14-luong.yaml` (the setting of Luong et al. 2015; data not shipped).");
}

}  // namespace luong::nmt
