// TrainTask: what the generic training loop needs from a model + data pair. The loop (trainer.h) owns
// steps, gradient synchronisation, optimisation, validation cadence, checkpoints and logging; the task owns
// the model, its data iterator and its random streams.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "framework/autograd/flat_parameters.h"
#include "framework/io/state_dict.h"

namespace luong {

struct StepResult {
  double loss_sum = 0.0;     // summed token loss of this rank's batch
  int64_t tokens = 0;        // target tokens of this rank's batch
  int64_t sentences = 0;
};

struct ValidationResult {
  double loss_sum = 0.0;  // summed token loss over the validation set
  int64_t tokens = 0;
  std::map<std::string, double> extra;  // further metrics (e.g. "bleu"), written to metrics.jsonl
  // This process gave up part way because a stop was requested: the figures are partial, never recorded.
  bool abandoned = false;
};

class TrainTask {
 public:
  virtual ~TrainTask() = default;
  virtual FlatParameters& parameters() = 0;
  // Moves to the next batch; false at the end of an epoch (the next call starts the next epoch).
  virtual bool next_batch() = 0;
  // How many parts the current batch is trained in (gradient accumulation; 1 without): the trainer runs
  // forward_backward on parts 0 .. batch_parts() - 1, the gradients summing up, then takes one step.
  virtual int batch_parts() const { return 1; }
  // Forward and backward of the SUMMED token loss on part `part` of the current batch: gradients accumulate
  // into parameters().grad(); the trainer divides by the global token count afterwards.
  virtual StepResult forward_backward(int part) = 0;
  // The validation set's loss (summed over every process's share) and further scores. `stop` is polled as it
  // goes (between batches, between decoding steps): once it says true the validation gives up and returns
  // with `abandoned` set, so that a stop request does not wait for a long validation. Every process still
  // takes part in the same collectives in the same order: the trainer then decides, all processes together,
  // that the result is not used.
  virtual ValidationResult validate(const std::function<bool()>& stop) = 0;
  virtual bool has_validation() const = 0;
  virtual int64_t epoch() const = 0;              // the epoch in progress, from 1
  virtual int64_t batches_per_epoch() const = 0;  // for ETAs (0 = unknown)
  // Everything needed to continue bitwise-identically: parameters, data position, random streams.
  virtual void save_state(StateDict& out) const = 0;
  // `source` names where the state came from (the checkpoint's path) in error messages.
  virtual void load_state(const StateDict& in, const std::string& source) = 0;
  // Metadata attributes for checkpoint files (dtype, vocab sizes, ...).
  virtual std::map<std::string, std::string> checkpoint_metadata() const { return {}; }
};

}  // namespace luong
