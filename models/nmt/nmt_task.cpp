#include "models/nmt/nmt_task.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <tuple>

#include "framework/core/precision.h"
#include "framework/io/checkpoint.h"
#include "framework/io/config_leaves.h"
#include "framework/kernels/cpu/bf16_gemm.h"
#include "framework/memory/allocator.h"
#include "models/nmt/bleu.h"
#include "models/nmt/chrf.h"
#include "models/nmt/data/bpe.h"
#include "models/nmt/data/shared_training_pairs.h"
#include "models/nmt/data/text_reader.h"
#include "models/nmt/ensemble.h"
#include "models/nmt/model_parts.h"
#include "models/nmt/starting_parameters.h"
#include "models/nmt/translator.h"
#include "models/nmt/valid_translations.h"

namespace luong::nmt {
namespace {

constexpr uint64_t kRankStride = 0x9E3779B97F4A7C15ull;  // decorrelates the per-rank dropout seeds

std::vector<int64_t> lengths_of(const Tensor& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  const int64_t* p = t.data<int64_t>();
  std::copy(p, p + t.numel(), out.begin());
  return out;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}

std::shared_ptr<const Corpus> load_corpus(const std::string& src, const std::string& tgt,
                                          const TokenizerOptions& options, const Subwords& subwords,
                                          const Vocabulary& sv, const Vocabulary& tv, int64_t max_len) {
  const TokenizedCorpus text = tokenize_files(src, tgt, options, subwords);
  return std::make_shared<Corpus>(encode_corpus(text, sv, tv, max_len));
}

// The config's keys that made `mine`, for messages: "data.bpe_merges is 10000".
std::string subword_setting(const DataConfig& d) {
  if (d.bpe_codes.empty())
    return str("data.bpe_merges is ", d.bpe_merges, d.bpe_joint ? "" : " with data.bpe_joint false");
  return str("data.bpe_codes is '", d.bpe_codes, "'",
             d.bpe_codes_tgt.empty() ? "" : str(" and data.bpe_codes_tgt '", d.bpe_codes_tgt, "'"));
}

// A run started with train.init_from reads its text with that checkpoint's units and vocabularies (unless
// train.init_vocabulary = data built its own); a resume without the key built its own from the data, which the
// checks after this one would report as another setting's mismatch ("set data.bpe_merges as the run was
// started").
void check_started_alike(const Checkpoint& view, bool tokens_from_checkpoint) {
  const auto config = view.state.strings.find("config");
  if (tokens_from_checkpoint || config == view.state.strings.end()) return;
  const auto leaves = config_leaves(config->second);
  const auto init_from = leaves.find("train.init_from");
  if (init_from == leaves.end() || init_from->second.empty() || init_from->second == "\"\"" ||
      init_from->second == "''")
    return;
  const auto vocabularies = leaves.find("train.init_vocabulary");
  if (vocabularies != leaves.end() && vocabularies->second == "data") return;
  LUONG_FAIL("checkpoint ", view.path, ": its run was started with train.init_from: ", init_from->second,
             " and reads its text with that checkpoint's vocabularies and subword units, but this run's config has "
             "no train.init_from; set it again to continue (any path: a resumed run takes them from its own "
             "checkpoint and does not read the file)");
}

// A run resumes only with the subword units its checkpoint was trained with (its vocabularies are pieces).
void check_resumed_subwords(const DataConfig& d, const Subwords& mine, const Checkpoint& view) {
  const Subwords stored = Subwords::load(view.state.strings, view.path);
  if (mine.any() && !stored.any())
    LUONG_FAIL("checkpoint ", view.path, " was trained on whole words (it has no BPE merges), but ", subword_setting(d),
               " in this run's config (--set ",
               d.bpe_codes.empty() ? "data.bpe_merges=0" : "data.bpe_codes='' --set data.bpe_codes_tgt=''",
               " continues it; a new --run-dir starts on subwords)");
  if (!mine.any() && stored.any())
    LUONG_FAIL("checkpoint ", view.path, " was trained on BPE subword units (",
               stored.is_joint() ? str(stored.src->merges(), " merges") : stored.describe(),
               "), but this run's config sets neither data.bpe_merges nor data.bpe_codes (set the one the run ",
               "was started with to continue)");
  if (!mine.any()) return;
  if (mine.is_joint() != stored.is_joint())
    LUONG_FAIL("checkpoint ", view.path, " was trained on ", stored.is_joint() ? "joint" : "per-side", " BPE merges (",
               stored.describe(), "), but ", subword_setting(d), " makes ", mine.is_joint() ? "joint" : "per-side",
               " ones (", mine.describe(),
               "): set data.bpe_joint / data.bpe_codes_tgt as the run was started to continue");
  if (mine.is_joint()) {
    check_string_list(view, Subwords::kJointKey, mine.src->to_list());
  } else {
    check_string_list(view, Subwords::kSrcKey, mine.src->to_list());
    check_string_list(view, Subwords::kTgtKey, mine.tgt->to_list());
  }
}

}  // namespace

SubwordSettings subword_settings(const DataConfig& d) {
  return {d.bpe_merges, d.bpe_joint, d.bpe_codes, d.bpe_codes_tgt};
}

StateDict model_tensors(const NmtModel& model) {
  StateDict out;
  for (const auto& [name, v] : model.named_parameters()) out.tensors[checkpoint_name(name)] = v.data();
  return out;
}

std::string checkpoint_name(const std::string& parameter_name) {
  std::string out = "model/" + parameter_name;
  std::replace(out.begin(), out.end(), '.', '/');
  return out;
}

NmtTask::NmtTask(const NmtConfig& cfg, ProcessGroup& group, const std::function<void(const std::string&)>& log,
                 std::optional<StartingPoint> start)
    : cfg_(cfg), group_(group), device_(group.device()), log_(log) {
  LUONG_CHECK(!cfg.data.train_src.empty() && !cfg.data.train_tgt.empty(),
              "data.train_src and data.train_tgt must name the training files");
  const TokenizerOptions words{cfg.data.lowercase};
  TokenizedCorpus text;
  if (start && !start->own_vocabularies) {
    // The checkpoint's units and vocabularies: its embedding and output rows belong to their tokens.
    subwords_ = start->run.subwords;
    src_vocab_ = start->run.src_vocab, tgt_vocab_ = start->run.tgt_vocab;
    tokens_from_checkpoint_ = true;
    text = tokenize_files(cfg.data.train_src, cfg.data.train_tgt, words, subwords_);
  } else {
    text = tokenize_files(cfg.data.train_src, cfg.data.train_tgt, words, Subwords{});
    // Learned from the training words on every start, or read from data.bpe_codes (a resumed run checks them
    // against its checkpoint's): the same text or file gives the same merges.
    std::string bpe_log;
    subwords_ = run_subwords(text, subword_settings(cfg.data), bpe_log);
    if (subwords_.any()) log(bpe_log);
    if (!cfg.data.bpe_joint && !subwords_.any())
      log("warning: data.bpe_joint = false has no effect without data.bpe_merges (it says how learned merges are "
          "learned; the run trains on whole words)");
    src_vocab_ = Vocabulary::build(count_tokens(text, text.src), cfg.data.src_vocab_size, cfg.data.min_freq);
    tgt_vocab_ = Vocabulary::build(count_tokens(text, text.tgt), cfg.data.tgt_vocab_size, cfg.data.min_freq);
  }
  tokenizer_ = Tokenizer(words, subwords_.src);
  Corpus train = encode_corpus(text, src_vocab_, tgt_vocab_, cfg.data.max_len);
  log(str("train: ", train.stats.summary()));
  share_training_pairs(group, train.examples, log);
  train_ = std::make_shared<Corpus>(std::move(train));
  log(str("vocabularies: source ", src_vocab_.size(), ", target ", tgt_vocab_.size()));
  // A vocabulary that maps most of the training text to <unk> (data.min_freq or a vocabulary size far too
  // small for the corpus) trains a model that can mostly say <unk>: a warning, since it may be meant.
  const CorpusStats& st = train_->stats;
  for (const auto& [side, unk, tokens] : {std::tuple{"source", st.src_unk, st.src_tokens},
                                          std::tuple{"target", st.tgt_unk, st.tgt_tokens}})
    if (tokens > 0 && 2 * unk > tokens)
      log(str("warning: ", 100 * unk / tokens, "% of the ", side, " training tokens are <unk> (data.min_freq = ",
              cfg.data.min_freq, ", data.", side == std::string("source") ? "src" : "tgt", "_vocab_size = ",
              side == std::string("source") ? cfg.data.src_vocab_size : cfg.data.tgt_vocab_size, ")"));
  LUONG_CHECK(!train_->examples.empty(), "no training pairs left in ", cfg.data.train_src, " / ", cfg.data.train_tgt,
              " (", train_->stats.summary(), ")");
  if (!cfg.data.valid_src.empty()) {
    valid_ = load_corpus(cfg.data.valid_src, cfg.data.valid_tgt, words, subwords_, src_vocab_, tgt_vocab_, 0);
    log(str("valid: ", valid_->stats.summary()));
    // A validation of nothing would report perplexity exp(0 / 0) = 0 as the best, and early stopping and the
    // plateau schedule would act on it.
    LUONG_CHECK(!valid_->examples.empty(), "no validation pairs in ", cfg.data.valid_src, " / ", cfg.data.valid_tgt,
                " (", valid_->stats.summary(), "): give a validation set with non-empty pairs, or leave ",
                "data.valid_src and data.valid_tgt empty to train without validation");
    if (cfg.train.scores_valid_translations()) {
      valid_sources_ = read_lines(cfg.data.valid_src);
      std::istringstream refs(read_text_file(cfg.data.valid_tgt));  // tokenize_files checked it above
      valid_references_ = bleu::read_lines(refs, cfg.data.valid_tgt);
      LUONG_CHECK(valid_sources_.size() == valid_references_.size(), "validation scoring: ", cfg.data.valid_src,
                  " has ", valid_sources_.size(), " lines and ", cfg.data.valid_tgt, " ", valid_references_.size());
    }
  }
  if (cfg.train.init_vocabulary == "data" && cfg.train.init_from.empty())
    log("warning: train.init_vocabulary = data has no effect without train.init_from (the run builds its "
        "vocabularies from its data and draws every parameter)");
  if (!cfg.train.init_skip.empty() && cfg.train.init_from.empty())
    log("warning: train.init_skip has no effect without train.init_from (every parameter is drawn by model.init)");
  if (cfg.train.valid_translations && !cfg.train.scores_valid_translations())
    log("warning: train.valid_translations = true has no effect: validations translate the validation set only "
        "with train.valid_bleu = true or train.valid_metric bleu or chrf");
  if (cfg.data.valid_src.empty()) {
    // Both act on validations only: without a validation set they never would, which is worth a word.
    if (cfg.train.early_stopping > 0)
      log(str("warning: train.early_stopping = ", cfg.train.early_stopping,
              " has no effect without a validation set (data.valid_src / data.valid_tgt are empty)"));
    if (cfg.train.scores_valid_translations())
      log(str("warning: train.", cfg.train.valid_bleu ? "valid_bleu" : "valid_metric = " + cfg.train.valid_metric,
              " has no effect without a validation set (data.valid_src / data.valid_tgt are empty)"));
    if (cfg.optim.schedule == "plateau")
      log("warning: optim.schedule = plateau never lowers the rate without a validation set (data.valid_src / "
          "data.valid_tgt are empty)");
  }

  BatchingOptions bo;
  bo.batch_size = cfg.train.batch_size;
  bo.by = parse_batch_by(cfg.train.batch_by);
  bo.pool_batches = cfg.data.pool_batches;
  bo.sort_key = parse_sort_key(cfg.data.sort_by);
  bo.seed = cfg.seed;
  bo.world_size = group.size();
  bo.rank = group.rank();
  bo.accumulate = static_cast<int>(cfg.train.accumulate);
  iterator_ = std::make_unique<BatchIterator>(train_, bo);
  batches_per_epoch_ = iterator_->batches_in_epoch();
  // Padding is computed work that trains nothing: say how much the batching leaves (the first epoch's plan;
  // every epoch's is alike).
  const PlanPadding pad = iterator_->padding();
  const std::string parts =
      bo.accumulate == 1 ? std::string() : str(" (each in ", bo.accumulate, " accumulated parts per process)");
  log(str("batches: ", batches_per_epoch_, " an epoch", parts, ", pools sorted by ", cfg.data.sort_by, "; padding ",
          percent(pad.src_fraction()), " of source and ", percent(pad.tgt_fraction()), " of target positions"));

  ModelConfig mc = cfg.model;
  mc.src_vocab = src_vocab_.size();
  mc.tgt_vocab = tgt_vocab_.size();
  mc.pad_id = Vocabulary::kPad;
  Generator init_gen(cfg.seed);
  model_ = std::make_unique<NmtModel>(mc, init_gen, DType::f32);
  std::vector<Variable> params;
  for (auto& [name, v] : model_->named_parameters()) params.push_back(v);
  frozen_ = parameter_indices_in_parts("train.freeze", cfg.train.freeze, *model_);
  LUONG_CHECK(frozen_.size() < params.size(), "train.freeze: ", cfg.train.freeze,
              " covers every parameter of the model: nothing would train");
  flat_ = std::make_unique<FlatParameters>(params, device_);
  allocator_for(Device::cpu()).empty_cache();  // set-up blocks (see Allocator::empty_cache)
  log(str("model: ", flat_->numel(), " parameters, attention ", mc.attention, ", ", mc.layers, " x ", mc.hidden_size,
          " LSTM, device ", device_));
  if (start && start->resumed && start->own_vocabularies) {
    // Its vocabularies were rebuilt from the data above, as at its start; the trainer restores the rest.
  } else if (start && start->resumed) {
    log(str("init: vocabularies and ", subwords_.any() ? subwords_.describe() : "whole words", " from ",
            start->checkpoint.path, ", as its run took them from ", start->run.cfg.train.init_from,
            " at its start (that file is not read again)"));
  } else if (start) {
    StartingParametersOptions so;
    so.init_skip = cfg.train.init_skip;
    so.units = subwords_.any() ? subwords_.describe() : "whole words";
    for (const std::string& line : load_starting_parameters(*start, *model_, src_vocab_, tgt_vocab_, so)) log(line);
    const std::string unused_warning =
        "warning: train.init_from: the checkpoint's vocabularies and subword units are used, so this setting has no "
        "effect (";
    for (const std::string& unused : start->unused_vocabulary_settings) log(unused_warning + unused + ")");
  }
  // train.precision: process-wide, read by every float32 GEMM; parameters and optimizer state stay float32.
  set_gemm_precision(parse_gemm_precision(cfg.train.precision));
  if (gemm_precision() != GemmPrecision::fp32) {
    // On a CPU, say whether the GEMMs really run in bf16 (AMX tiles, AVX512-BF16) or are emulated, which is
    // slower than fp32. tf32 is always emulated there.
    const std::string how = device_.is_cuda()           ? ""
                            : !cpu::bf16_gemms_native() ? "; CPU: emulated, slower than fp32"
                                                        : str("; CPU: ", cpu::bf16_kernel_name(cpu::bf16_kernel()));
    log(str("precision: float32 GEMMs with ", cfg.train.precision, " inputs (float32 accumulation, weights, "
            "optimizer state and activations", how, ")"));
  }
}

bool NmtTask::next_batch() {
  std::optional<std::vector<Batch>> parts = iterator_->next_parts();
  if (!parts) {
    parts_.clear();
    return false;
  }
  parts_ = std::move(*parts);
  if (device_.is_cuda()) {
    for (Batch& b : parts_) {
      b.src = b.src.to(device_);
      b.tgt_in = b.tgt_in.to(device_);
      b.tgt_out = b.tgt_out.to(device_);
    }
  }
  return true;
}

// The attention weights a training step keeps for backward grow as sentences x source x target length: a
// data.max_len raised far past the usual (a pair of 100,000-token lines) would make one batch ask for tens
// of GB and end in the kernel's out-of-memory killer. Refused before allocating when it would take more
// than half of the host's memory, naming the longest pair's line (CPU; on a GPU the caching allocator's
// out-of-memory error names the request).
void check_attention_memory(const Batch& b, const Corpus& corpus, const NmtConfig& cfg, Device device) {
  if (!device.is_cpu()) return;
  const int64_t rows = b.src.size(0), src_len = b.src.size(1), tgt_len = b.tgt_in.size(1);
  const double bytes = static_cast<double>(rows) * src_len * tgt_len * sizeof(float);
  const double host = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (host <= 0 || bytes <= host / 2) return;
  int64_t line = 0;
  size_t longest = 0;
  for (int64_t i : b.indices) {
    const Example& e = corpus.examples[static_cast<size_t>(i)];
    if (e.src.size() + e.tgt.size() > longest) longest = e.src.size() + e.tgt.size(), line = e.line;
  }
  LUONG_FAIL("a training batch of ", rows, " sentences (source length ", src_len, ", target length ", tgt_len,
             ") needs about ", bytes / 1e9, " GB for its attention weights alone, more than half of this machine's ",
             host / 1e9, " GB; its longest pair is line ", line, " of ", cfg.data.train_src, " / ", cfg.data.train_tgt,
             ". Lower data.max_len (now ", cfg.data.max_len, ") or train.batch_size, or split the long lines.");
}

StepResult NmtTask::forward_backward(int part) {
  LUONG_CHECK(part >= 0 && part < batch_parts(), "forward_backward(", part, ") without that part of a batch (",
              batch_parts(), " parts)");
  const Batch& batch = parts_[static_cast<size_t>(part)];
  check_attention_memory(batch, *train_, cfg_, device_);
  if (part == 0) ++step_;
  // The stream of the rank this part stands for (see the header): rank * accumulate + part.
  const uint64_t stream_rank = static_cast<uint64_t>(group_.rank()) * parts_.size() + static_cast<uint64_t>(part);
  Generator dropout_gen(cfg_.seed + stream_rank * kRankStride, static_cast<uint64_t>(step_) << 32);
  model_->train();
  CrossEntropy ce = model_->forward_loss(batch.src, lengths_of(batch.src_lengths), batch.tgt_in, batch.tgt_out,
                                         cfg_.train.label_smoothing, &dropout_gen);
  ce.loss.backward();
  return {ce.loss.data().item(), ce.tokens, batch.sentences};
}

std::vector<double> evaluate_batch_losses(const NmtModel& model, const Corpus& corpus, int64_t batch_size,
                                          Device device, int rank, int world, const std::function<bool()>& stop,
                                          bool* stopped) {
  LUONG_CHECK(batch_size > 0 && world > 0 && rank >= 0 && rank < world, "evaluate_batch_losses: batch size ",
              batch_size, ", rank ", rank, " of ", world);
  NoGradGuard no_grad;
  const int64_t n = static_cast<int64_t>(corpus.examples.size());
  const std::vector<int64_t> order = evaluation_order(corpus);
  const int64_t batches = (n + batch_size - 1) / batch_size;
  std::vector<double> out(static_cast<size_t>(2 * batches), 0.0);
  for (int64_t k = rank; k < batches; k += world) {
    if (stop && stop()) {
      if (stopped) *stopped = true;
      break;
    }
    const int64_t start = k * batch_size;
    std::vector<int64_t> idx(order.begin() + start, order.begin() + std::min(n, start + batch_size));
    Batch b = make_batch(corpus, idx);
    CrossEntropy ce = model.forward_loss(b.src.to(device), lengths_of(b.src_lengths), b.tgt_in.to(device),
                                         b.tgt_out.to(device), 0.0, nullptr);
    out[static_cast<size_t>(2 * k)] = ce.loss.data().item();
    out[static_cast<size_t>(2 * k + 1)] = static_cast<double>(ce.tokens);
  }
  return out;
}

std::vector<int64_t> evaluation_order(const Corpus& corpus) {
  const int64_t n = static_cast<int64_t>(corpus.examples.size());
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  // Length-sorted batches pad less; the summed loss does not depend on the order.
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return sorts_before(corpus.examples[static_cast<size_t>(a)], corpus.examples[static_cast<size_t>(b)],
                        SortKey::longer_side);
  });
  return order;
}

ValidationResult sum_batch_losses(const std::vector<double>& per_batch) {
  ValidationResult r;
  for (size_t k = 0; k + 1 < per_batch.size(); k += 2) {
    r.loss_sum += per_batch[k];
    r.tokens += static_cast<int64_t>(per_batch[k + 1]);
  }
  return r;
}

ValidationResult evaluate_loss(const NmtModel& model, const Corpus& corpus, int64_t batch_size, Device device) {
  return sum_batch_losses(evaluate_batch_losses(model, corpus, batch_size, device, 0, 1));
}

ValidationResult NmtTask::validate(const std::function<bool()>& stop) {
  model_->eval();
  const int64_t bs = cfg_.train.batch_by == "sentences" ? cfg_.train.batch_size : 64;
  bool stopped = false;
  std::vector<double> per_batch =
      evaluate_batch_losses(*model_, *valid_, bs, device_, group_.rank(), group_.size(), stop, &stopped);
  if (group_.size() > 1) group_.all_reduce_scalars(per_batch);
  ValidationResult out = sum_batch_losses(per_batch);
  if (!valid_sources_.empty()) {
    // Also after a stop: every process takes part in the scores' all-reduce (this one gives up at once).
    const TranslationScores s = validation_scores(stop);
    out.extra["valid_bleu"] = s.bleu;
    out.extra["valid_chrf"] = s.chrf;
    stopped = stopped || s.abandoned;
  }
  out.abandoned = stopped;
  model_->train();
  return out;
}

// Each process translates every world-th validation sentence with the eval.* settings; BLEU's and chrF's
// statistics add up over sentences, so one all-reduce of them gives every process the scores of the whole set,
// the same as one process computes (`luong eval` with the checkpoint saved at this step scores the same).
NmtTask::TranslationScores NmtTask::validation_scores(const std::function<bool()>& stop) const {
  NoGradGuard no_grad;
  const int rank = group_.rank(), world = group_.size();
  std::vector<std::string> sources;
  std::vector<size_t> lines;
  for (size_t i = static_cast<size_t>(rank); i < valid_sources_.size(); i += static_cast<size_t>(world)) {
    sources.push_back(valid_sources_[i]);
    lines.push_back(i);
  }
  TranslateOptions o;
  o.beam.beam_size = cfg_.eval.beam_size;
  o.beam.length_penalty = cfg_.eval.length_penalty;
  o.beam.max_len_ratio = cfg_.eval.max_len_ratio;
  o.batch_size = cfg_.eval.batch_size;
  o.beam.stop = stop;
  std::vector<Translation> translations;
  bool abandoned = false;
  try {
    translations = translate_sentences(
        Ensemble(*model_), {src_vocab_, tgt_vocab_, tokenizer_, cfg_.model.reverse_source}, device_, sources, o);
  } catch (const DecodingStopped&) {
    abandoned = true;  // no statistics from this process; the all-reduce below still runs
  }
  bleu::BleuStats stats;
  chrf::ChrfStats chars;
  for (size_t k = 0; k < translations.size(); ++k) {
    stats += bleu::sentence_stats(translations[k].text, valid_references_[lines[k]]);
    chars += chrf::sentence_stats(translations[k].text, valid_references_[lines[k]], cfg_.eval.chrf_word_order);
  }
  // One vector for both: hyp_len, ref_len, BLEU's correct and total, chrF's hypothesis, reference and matched
  // n-grams; and last, how many processes gave up (a validation cut short keeps no translations anywhere).
  std::vector<int64_t> v{stats.hyp_len, stats.ref_len};
  for (const auto* part : {&stats.correct, &stats.total}) v.insert(v.end(), part->begin(), part->end());
  for (const auto* part : {&chars.hyp, &chars.ref, &chars.match}) v.insert(v.end(), part->begin(), part->end());
  v.push_back(abandoned ? 1 : 0);
  if (world > 1) group_.all_reduce_scalars(v);
  if (!valid_translations_dir_.empty() && v.back() == 0) {
    std::vector<std::string> share;
    for (const Translation& t : translations) share.push_back(t.text);
    write_valid_translations(group_, valid_translations_dir_, step_, share, valid_sources_.size());
  }
  size_t at = 0;
  auto take = [&](auto& part) {
    for (auto& x : part) x = v[at++];
  };
  stats.hyp_len = v[at++], stats.ref_len = v[at++];
  take(stats.correct), take(stats.total), take(chars.hyp), take(chars.ref), take(chars.match);
  return {bleu::score_from_stats(stats).score, chrf::score_from_stats(chars, cfg_.eval.chrf_word_order).score,
          abandoned};
}

void NmtTask::save_state(StateDict& out) const {
  for (const auto& [path, tensor] : model_tensors(*model_).tensors) out.tensors[path] = tensor;
  const IteratorState s = iterator_->state();
  out.ints["data/epoch"] = s.epoch;
  out.ints["data/index"] = s.index;
  out.ints["data/step"] = step_;
  out.strings["data/sort_by"] = sort_key_name(iterator_->options().sort_key);
  out.strings["vocab/src"] = join_string_list(src_vocab_.to_tokens());
  out.strings["vocab/tgt"] = join_string_list(tgt_vocab_.to_tokens());
  subwords_.save(out.strings);
}

void NmtTask::load_state(const StateDict& in, const std::string& source) {
  Checkpoint view;
  view.state = in;
  view.path = source;  // the mismatch errors name it: "checkpoint <source>: parameter ..."
  // Tokens are read through the merges, so a checkpoint resumes only with the ones it was trained with.
  check_started_alike(view, tokens_from_checkpoint_);
  check_resumed_subwords(cfg_.data, subwords_, view);
  check_string_list(view, "vocab/src", src_vocab_.to_tokens());
  check_string_list(view, "vocab/tgt", tgt_vocab_.to_tokens());
  load_tensors_into(view, model_tensors(*model_), "model/");
  // The plan of an epoch depends on the sort key, so a resumed run keeps the one it started with; checkpoints
  // written before the key existed sorted by source length.
  const auto saved_key = in.strings.find("data/sort_by");
  const SortKey key = parse_sort_key(saved_key == in.strings.end() ? "source" : saved_key->second);
  if (key != iterator_->options().sort_key) {
    log_(str("warning: data.sort_by: the run keeps the batch order it started with (", sort_key_name(key), ", from ",
             source, "), not the config's ", sort_key_name(iterator_->options().sort_key),
             ", so that it stays the run it was; a new run uses the config's"));
    BatchingOptions bo = iterator_->options();
    bo.sort_key = key;
    iterator_ = std::make_unique<BatchIterator>(train_, bo);
    batches_per_epoch_ = iterator_->batches_in_epoch();
  }
  iterator_->set_state({in.ints.at("data/epoch"), in.ints.at("data/index")});
  step_ = in.ints.at("data/step");
}

uint64_t NmtTask::data_fingerprint() const {
  // FNV-1a's step on whole 64-bit words rather than bytes (8x fewer steps for a large corpus): each step is
  // a bijection of the state, so two sequences that differ in one word always hash differently.
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](uint64_t word) { h = (h ^ word) * 0x100000001b3ULL; };
  for (const Vocabulary* v : {&src_vocab_, &tgt_vocab_}) {
    for (const std::string& token : v->to_tokens()) {
      mix(token.size());
      for (const char ch : token) mix(static_cast<unsigned char>(ch));
    }
  }
  for (const Corpus* c : {train_.get(), valid_.get()}) {
    if (!c) continue;
    mix(c->examples.size());
    for (const Example& e : c->examples) {
      mix(e.src.size());
      for (const int64_t id : e.src) mix(static_cast<uint64_t>(id));
      mix(e.tgt.size());
      for (const int64_t id : e.tgt) mix(static_cast<uint64_t>(id));
    }
  }
  return h;
}

std::map<std::string, std::string> NmtTask::checkpoint_metadata() const {
  return {{"dtype", "float32"},
          {"src_vocab_size", std::to_string(src_vocab_.size())},
          {"tgt_vocab_size", std::to_string(tgt_vocab_.size())},
          {"attention", cfg_.model.attention}};
}

}  // namespace luong::nmt
