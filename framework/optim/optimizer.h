// Optimizers update a FlatParameters' data buffer from its grad buffer with one fused kernel. The learning
// rate is not part of the optimizer: the schedule supplies it on every step. State buffers (momentum, Adam
// moments) are flat, have the parameters' numel, dtype and device (float32 for float32 parameters), and
// are allocated on the first step. state()/load_state() carry them and the step counter, so a resumed run
// continues bitwise-identically.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "framework/autograd/flat_parameters.h"
#include "framework/core/registry.h"
#include "framework/io/state_dict.h"

namespace luong {

// Hyperparameters for every optimizer; each reads the ones it uses and validates them.
struct OptimizerOptions {
  double momentum = 0.0;      // sgd: heavy-ball momentum, 0 = plain SGD (no state)
  double beta1 = 0.9;         // adam: first-moment decay
  double beta2 = 0.999;       // adam: second-moment decay
  double eps = 1e-8;          // adam: added to sqrt(v_hat)
  double weight_decay = 0.0;  // sgd: L2 added to the gradient; adam: see `decoupled`
  // adam: true = decoupled decay param -= lr * weight_decay * param (AdamW, Loshchilov & Hutter 2019), which
  // does not pass the decay through the adaptive scaling; false = L2 added to the gradient as in the
  // original Adam, so the decay is rescaled by 1 / sqrt(v_hat).
  bool decoupled = true;
};

class Optimizer {
 public:
  Optimizer(std::string name, OptimizerOptions options) : name_(std::move(name)), options_(options) {}
  virtual ~Optimizer() = default;

  // One update of params.data() from params.grad() (read only) with learning rate lr (>= 0). The update reads
  // the gradient times grad_scale (finite, >= 0): the trainer passes its token average and clip factor here
  // (measure_average_and_clip) instead of scaling the gradient buffer in a pass of its own.
  // `only`: the spans to update (train.freeze's trained parameters); empty = the whole buffer. Elements outside
  // them, and their optimizer state, are left exactly as they are: weight decay does not reach them either.
  void step(FlatParameters& params, double lr, double grad_scale = 1.0, std::span<const FlatSpan> only = {});
  // Writes "name", "step" and each state buffer (copied: a snapshot) into out; load_state reads them back
  // and checks that the optimizer name matches.
  void state(StateDict& out) const;
  // The same without the copies: the buffers share storage with the live state, as a model's parameters in
  // a checkpoint do, so out must be written before the next step. For the trainer's synchronous checkpoint
  // writes, where a snapshot would cost the optimizer's memory again (66 MB for Multi30k's Adam, about
  // 1.7 GB on the paper model's GPU).
  void state_view(StateDict& out) const;
  void load_state(const StateDict& in);
  // Checks restored state buffers against the parameters they will update (and moves them to their dtype
  // and device), so that a resume with another model fails while loading, not at its first step.
  void fit_state_to(const FlatParameters& params) {
    if (!buffers_.empty()) prepare_buffers(params);
  }

  const std::string& name() const { return name_; }
  const OptimizerOptions& options() const { return options_; }
  int64_t steps() const { return step_; }  // updates taken so far

 protected:
  // Names of the flat state buffers this optimizer keeps ("m", "v"); each (numel,), zero-initialised.
  virtual std::vector<std::string> buffer_names() const = 0;
  // The fused update for the t-th step (t from 1), reading grad_scale * grad as the gradient. param, grad and
  // each buffer: (numel,)
  virtual void update(Tensor& param, const Tensor& grad, double grad_scale, std::vector<Tensor>& buffers, double lr,
                      int64_t t) = 0;

 private:
  void prepare_buffers(const FlatParameters& params);

  std::string name_;
  OptimizerOptions options_;
  int64_t step_ = 0;
  std::vector<Tensor> buffers_;  // each (numel,), in buffer_names() order; empty until the first step
};

using OptimizerFactory = std::function<std::unique_ptr<Optimizer>(const OptimizerOptions&)>;
using OptimizerRegistry = Registry<OptimizerFactory>;

// The optimizer registered under `name`; the error for an unknown name lists the registered ones.
std::unique_ptr<Optimizer> make_optimizer(const std::string& name, const OptimizerOptions& options = {});

}  // namespace luong

// LUONG_REGISTER_OPTIMIZER("adam", factory, "help text"): one line in the optimizer's own file.
#define LUONG_REGISTER_OPTIMIZER(name, factory, help)                                      \
  static const bool LUONG_CONCAT(kLuongOptimizerRegistered_, __COUNTER__) = \
      ::luong::OptimizerRegistry::instance().add(name, factory, help)
