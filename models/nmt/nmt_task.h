// NmtTask: the Luong NMT model and its data as a TrainTask for the generic trainer.
//
// Random streams: parameters are initialised from Generator(seed); dropout in step s on rank r draws from
// Generator(seed + r * kRankStride, s << 32), a pure function of (seed, rank, step). The dropout stream
// therefore needs no saved state to resume exactly, and it differs per rank but is reproducible. With
// train.accumulate A, part m of rank r draws as rank r * A + m would: one process accumulating N parts
// trains exactly as N processes do, dropout included.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "framework/dist/process_group.h"
#include "framework/train/train_task.h"
#include "models/nmt/data/batch_iterator.h"
#include "models/nmt/data/corpus.h"
#include "models/nmt/data/subwords.h"
#include "models/nmt/data/tokenizer.h"
#include "models/nmt/data/vocabulary.h"
#include "models/nmt/model.h"
#include "models/nmt/nmt_config.h"
#include "models/nmt/starting_point.h"

namespace luong::nmt {

class NmtTask : public TrainTask {
 public:
  // Reads and encodes the training (and validation) data, learns the subword units and builds the
  // vocabularies from the training data, builds and initialises the model on the group's device. With a
  // starting point (train.init_from, read by read_starting_point against this config), its units and
  // vocabularies are used and its parameters loaded instead; with a resumed one (resumed_starting_point), its
  // units and vocabularies only. `log` receives human-readable set-up lines (corpus statistics).
  NmtTask(const NmtConfig& cfg, ProcessGroup& group, const std::function<void(const std::string&)>& log,
          std::optional<StartingPoint> start = std::nullopt);

  FlatParameters& parameters() override { return *flat_; }
  bool next_batch() override;
  int batch_parts() const override { return static_cast<int>(parts_.size()); }
  StepResult forward_backward(int part) override;
  ValidationResult validate(const std::function<bool()>& stop) override;
  bool has_validation() const override { return valid_ != nullptr; }
  int64_t epoch() const override { return iterator_->state().epoch + 1; }
  int64_t batches_per_epoch() const override { return batches_per_epoch_; }
  void save_state(StateDict& out) const override;
  void load_state(const StateDict& in, const std::string& source) override;
  std::map<std::string, std::string> checkpoint_metadata() const override;

  // The indices (into parameters().params()) of the parameters under train.freeze's parts; checked against
  // the model when the task is built.
  const std::vector<size_t>& frozen_parameters() const { return frozen_; }

  NmtModel& model() { return *model_; }
  const Vocabulary& src_vocab() const { return src_vocab_; }
  const Vocabulary& tgt_vocab() const { return tgt_vocab_; }
  // Source words to tokens as this run reads them (with the source's BPE, if any); its detokenize() serves
  // the target too (the joiner marks undo any split).
  const Tokenizer& tokenizer() const { return tokenizer_; }
  // Each side's BPE (null sides for whole words).
  const Subwords& subwords() const { return subwords_; }
  // A hash of the vocabularies and every encoded training and validation pair: equal on two processes
  // only if they train on the same data (launch/rank_agreement.h compares it across an mpirun job).
  uint64_t data_fingerprint() const;
  int64_t training_pairs() const { return static_cast<int64_t>(train_->examples.size()); }
  // train.valid_translations: validations that translate the validation set keep the translations in `dir`
  // (models/nmt/valid_translations.h). Every process of the job must be given the same.
  void keep_valid_translations_in(const std::string& dir) { valid_translations_dir_ = dir; }

 private:
  NmtConfig cfg_;
  ProcessGroup& group_;
  Device device_;
  Tokenizer tokenizer_;
  Subwords subwords_;
  Vocabulary src_vocab_, tgt_vocab_;
  bool tokens_from_checkpoint_ = false;  // subwords_ and the vocabularies came from a StartingPoint
  std::shared_ptr<const Corpus> train_, valid_;
  // With validation BLEU and chrF (train.valid_bleu, or train.valid_metric bleu or chrf): the validation source lines
  // and the references as sacreBLEU reads them, every line (an empty one translates to an empty line), as `luong eval`.
  std::vector<std::string> valid_sources_, valid_references_;
  std::string valid_translations_dir_;  // "" = not kept
  // BLEU and chrF of the validation set's translations (valid_bleu and valid_chrf of the validation record).
  struct TranslationScores {
    double bleu = 0, chrf = 0;
    bool abandoned = false;  // this process gave up decoding (`stop`); the scores are partial
  };
  TranslationScores validation_scores(const std::function<bool()>& stop) const;
  std::unique_ptr<BatchIterator> iterator_;
  std::unique_ptr<NmtModel> model_;
  std::unique_ptr<FlatParameters> flat_;
  std::vector<size_t> frozen_;  // train.freeze
  std::vector<Batch> parts_;  // of the current step's batch: train.accumulate of them
  int64_t batches_per_epoch_ = 0;
  int64_t step_ = 0;  // steps taken, for the dropout stream
  std::function<void(const std::string&)> log_;
};

// The data.bpe_* keys as run_subwords (data/corpus.h) takes them.
SubwordSettings subword_settings(const DataConfig& data);

// Parameter name "encoder.lstm.0.weight_ih" -> checkpoint path "model/encoder/lstm/0/weight_ih".
std::string checkpoint_name(const std::string& parameter_name);
// The model's parameters under their checkpoint paths, sharing their storage: saving them saves the model, and
// load_tensors_into(checkpoint, model_tensors(model), "model/") loads it.
StateDict model_tensors(const NmtModel& model);

// The summed loss and token count of `model` over `corpus` (teacher forcing, eval mode, no gradients).
ValidationResult evaluate_loss(const NmtModel& model, const Corpus& corpus, int64_t batch_size, Device device);

// The same pass, split over the processes of a job: the corpus is sorted (SortKey::longer_side) and cut into
// batches of `batch_size` exactly as evaluate_loss does, and rank r computes batches r, r + world, ... Returns
// one (loss sum, tokens) pair per batch, zero for other ranks' batches, so that an all-reduce gives every
// batch's values and summing them in batch order (sum_batch_losses) gives, bit for bit, what evaluate_loss
// gives on one process: validation costs 1/world of the time and its result does not depend on world.
// `stop`, when set, is polled before each batch: once it says true the pass ends there (*stopped = true; the
// later batches stay zero).
std::vector<double> evaluate_batch_losses(const NmtModel& model, const Corpus& corpus, int64_t batch_size,
                                          Device device, int rank, int world, const std::function<bool()>& stop = {},
                                          bool* stopped = nullptr);
ValidationResult sum_batch_losses(const std::vector<double>& per_batch);
// The example indices of `corpus` in the order evaluate_loss cuts its batches from (stable, longer_side).
std::vector<int64_t> evaluation_order(const Corpus& corpus);

}  // namespace luong::nmt
