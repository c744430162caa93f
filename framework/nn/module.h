// Module: a layer or model with named parameters and named child modules.
// Parameters are Variables (shared handles), so after FlatParameters rebinds their data and grad into flat
// buffers every module still sees the live values: modules read parameters through the Variable at each
// forward and never cache raw pointers.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "framework/autograd/variable.h"
#include "framework/core/philox.h"

namespace luong {

using NamedParameter = std::pair<std::string, Variable>;

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Own parameters first (registration order), then each child's under "child.", depth first, in
  // registration order: e.g. "encoder.lstm.0.weight_ih". The order is deterministic; it defines the layout
  // of FlatParameters and the names in checkpoints.
  std::vector<NamedParameter> named_parameters() const;
  std::vector<Variable> parameters() const;
  int64_t parameter_count() const;  // total elements
  // Writes each parameter's full name into its Variable (so error messages and hooks can name it).
  void assign_parameter_names();

  // Train / eval mode for this module and every child (dropout is the identity in eval mode).
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Fills every parameter with the registered initialiser `init` (framework/nn/init.h) drawing from
  // `gen` in named_parameters() order, so the same seed gives the same model; then each module's
  // post_init() fixes what the initialiser must not touch (e.g. the embedding padding row).
  void init_parameters(const std::string& init, double range, Generator& gen);

 protected:
  // Creates a float leaf parameter (zero-filled until init_parameters) that requires a gradient.
  Variable register_parameter(const std::string& name, const Shape& shape, DType dtype);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    add_child(name, m);
    return m;
  }
  virtual void post_init() {}

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> m);
  void collect(const std::string& prefix, std::vector<NamedParameter>& out) const;
  void post_init_all();

  std::vector<NamedParameter> params_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

}  // namespace luong
