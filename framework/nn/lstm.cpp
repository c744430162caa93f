#include "framework/nn/lstm.h"

namespace luong {

LstmLayer::LstmLayer(int64_t input_size, int64_t hidden_size, DType dtype) : input_(input_size), hidden_(hidden_size) {
  LUONG_CHECK(input_ > 0 && hidden_ > 0, "LstmLayer: sizes must be positive, got input ", input_, ", hidden ",
              hidden_);
  weight_ih_ = register_parameter("weight_ih", {input_, 4 * hidden_}, dtype);
  weight_hh_ = register_parameter("weight_hh", {hidden_, 4 * hidden_}, dtype);
  bias_ = register_parameter("bias", {4 * hidden_}, dtype);
}

LstmState LstmLayer::step(const Variable& x, const LstmState& prev) const {
  return lstm_cell(x, prev, weight_ih_, weight_hh_, bias_);
}

LstmState LstmLayer::step_projected(const Variable& x_proj, const LstmState& prev) const {
  return lstm_cell(x_proj, prev, Variable(), weight_hh_, bias_);
}

LstmSequence LstmLayer::run(const Variable& x, const std::vector<int64_t>& lengths, const LstmState& init,
                            bool reverse) const {
  LUONG_CHECK(x.dim() == 3 && x.size(2) == input_, "LstmLayer(", input_, " -> ", hidden_, "): input ",
              shape_str(x.shape()), " is not (T, B, ", input_, ")");
  const int64_t B = x.size(1), H = hidden_;  // lengths are checked by lstm_sequence
  const Variable proj = matmul(x, weight_ih_);  // (T, B, 4H): every step's input projection in one GEMM
  LstmState state = init;
  if (!state.h.defined()) state.h = Variable(Tensor::zeros({B, H}, x.dtype(), x.device()));
  if (!state.c.defined()) state.c = Variable(Tensor::zeros({B, H}, x.dtype(), x.device()));
  // The recurrence as one node (ops/lstm_sequence.cpp): padding carried, weight gradients over all steps.
  LstmSequenceResult r = lstm_sequence(proj, state, weight_hh_, bias_, lengths, reverse);
  return {r.outputs, {r.final}};
}

Lstm::Lstm(const LstmOptions& opt) : opt_(opt) {
  LUONG_CHECK(opt_.layers >= 1, "Lstm: needs at least one layer, got ", opt_.layers);
  LUONG_CHECK(!opt_.bidirectional_first || opt_.hidden_size % 2 == 0, "Lstm: a bidirectional first layer needs an ",
              "even hidden size (each direction has half), got ", opt_.hidden_size);
  dropout_ = register_module("dropout", std::make_shared<Dropout>(opt_.dropout));
  for (int64_t l = 0; l < opt_.layers; ++l) {
    const int64_t in = l == 0 ? opt_.input_size : opt_.hidden_size;
    const std::string name = std::to_string(l);
    if (l == 0 && opt_.bidirectional_first) {
      const int64_t half = opt_.hidden_size / 2;
      layers_.push_back(register_module(name + ".fwd", std::make_shared<LstmLayer>(in, half, opt_.dtype)));
      layers_.push_back(register_module(name + ".bwd", std::make_shared<LstmLayer>(in, half, opt_.dtype)));
    } else {
      layers_.push_back(register_module(name, std::make_shared<LstmLayer>(in, opt_.hidden_size, opt_.dtype)));
    }
  }
}

const LstmLayer& Lstm::layer(int64_t l) const {
  LUONG_CHECK(l >= 0 && l < opt_.layers, "Lstm: layer ", l, " out of range [0, ", opt_.layers, ")");
  LUONG_CHECK(!(l == 0 && opt_.bidirectional_first), "Lstm: layer 0 is bidirectional; use direction()");
  return *layers_[static_cast<size_t>(opt_.bidirectional_first ? l + 1 : l)];
}

const LstmLayer& Lstm::direction(bool backward) const {
  LUONG_CHECK(opt_.bidirectional_first, "Lstm: direction() on a unidirectional stack");
  return *layers_[backward ? 1 : 0];
}

LstmSequence Lstm::forward(const Variable& x, const std::vector<int64_t>& lengths, Generator* gen,
                           const std::vector<LstmState>& init) const {
  LUONG_CHECK(init.empty() || static_cast<int64_t>(init.size()) == opt_.layers, "Lstm: ", init.size(),
              " initial states for ", opt_.layers, " layers");
  auto init_of = [&](int64_t l) { return init.empty() ? LstmState{} : init[static_cast<size_t>(l)]; };
  LstmSequence result;
  Variable input = x;
  for (int64_t l = 0; l < opt_.layers; ++l) {
    if (l > 0) input = dropout_->forward(input, gen);  // between layers (Zaremba et al. 2014)
    if (l == 0 && opt_.bidirectional_first) {
      LstmState s0 = init_of(0);
      const int64_t half = opt_.hidden_size / 2;
      auto split_state = [&](const LstmState& s, int64_t part) {
        if (!s.h.defined()) return LstmState{};
        return LstmState{slice(s.h, 1, part * half, half), slice(s.c, 1, part * half, half)};
      };
      LstmSequence f = direction(false).run(input, lengths, split_state(s0, 0), false);
      LstmSequence b = direction(true).run(input, lengths, split_state(s0, 1), true);
      input = concat({f.outputs, b.outputs}, 2);
      result.final.push_back({concat({f.final[0].h, b.final[0].h}, 1), concat({f.final[0].c, b.final[0].c}, 1)});
    } else {
      LstmSequence s = layer(l).run(input, lengths, init_of(l), false);
      input = s.outputs;
      result.final.push_back(s.final[0]);
    }
  }
  result.outputs = input;
  return result;
}

Variable Lstm::step_projected(const Variable& x0_proj, std::vector<LstmState>& states, Generator* gen) const {
  LUONG_CHECK(!opt_.bidirectional_first, "Lstm: step_projected() cannot run a bidirectional layer step by step");
  LUONG_CHECK(static_cast<int64_t>(states.size()) == opt_.layers, "Lstm: ", states.size(), " states for ",
              opt_.layers, " layers");
  states[0] = layer(0).step_projected(x0_proj, states[0]);
  for (int64_t l = 1; l < opt_.layers; ++l) {
    auto& s = states[static_cast<size_t>(l)];
    s = layer(l).step(dropout_->forward(states[static_cast<size_t>(l - 1)].h, gen), s);
  }
  return states.back().h;
}

}  // namespace luong
