// Module, initialisers, Linear, Embedding and Dropout: naming, reproducible init, FlatParameters
// rebinding, gradient checks, error messages.
#include <gtest/gtest.h>

#include "framework/autograd/flat_parameters.h"
#include "framework/nn/dropout.h"
#include "framework/nn/embedding.h"
#include "framework/nn/init.h"
#include "framework/nn/linear.h"
#include "framework/nn/lstm.h"
#include "tests/support/error_of.h"
#include "tests/support/gradcheck.h"

namespace luong::testing {
namespace {

class TwoLayers : public Module {
 public:
  explicit TwoLayers(DType dt = DType::f32) {
    first = register_module("first", std::make_shared<Linear>(3, 4, true, dt));
    scale = register_parameter("scale", {4}, dt);
    second = register_module("second", std::make_shared<Linear>(4, 2, false, dt));
    drop = register_module("drop", std::make_shared<Dropout>(0.5));
  }
  std::shared_ptr<Linear> first, second;
  std::shared_ptr<Dropout> drop;
  Variable scale;
};

std::vector<std::string> names_of(const Module& m) {
  std::vector<std::string> out;
  for (auto& [n, _] : m.named_parameters()) out.push_back(n);
  return out;
}

TEST(Module, NamesOwnParametersFirstThenChildrenInRegistrationOrder) {
  TwoLayers m;
  EXPECT_EQ(names_of(m), (std::vector<std::string>{"scale", "first.weight", "first.bias", "second.weight"}));
  EXPECT_EQ(m.parameter_count(), 4 + 12 + 4 + 8);
  m.assign_parameter_names();
  EXPECT_EQ(m.first->weight().name(), "first.weight");
}

TEST(Module, LstmParameterNamesIncludeDirections) {
  LstmOptions o;
  o.input_size = 3, o.hidden_size = 4, o.layers = 2, o.bidirectional_first = true;
  Lstm lstm(o);
  EXPECT_EQ(names_of(lstm), (std::vector<std::string>{"0.fwd.weight_ih", "0.fwd.weight_hh", "0.fwd.bias",
                                                       "0.bwd.weight_ih", "0.bwd.weight_hh", "0.bwd.bias",
                                                       "1.weight_ih", "1.weight_hh", "1.bias"}));
  EXPECT_EQ(lstm.direction(true).weight_ih().shape(), (Shape{3, 8}));  // each direction has H / 2
  EXPECT_EQ(lstm.layer(1).weight_ih().shape(), (Shape{4, 16}));
  o.hidden_size = 5;
  EXPECT_NE(error_of([&] { Lstm odd(o); }).find("even hidden size"), std::string::npos);
}

TEST(Module, TrainAndEvalReachEveryChild) {
  TwoLayers m;
  EXPECT_TRUE(m.drop->is_training());
  m.eval();
  EXPECT_FALSE(m.drop->is_training());
  EXPECT_FALSE(m.drop->active());
  m.train();
  EXPECT_TRUE(m.drop->active());
}

TEST(Init, UniformIsReproducibleFromTheSeedAndWithinRange) {
  TwoLayers a, b, c;
  Generator g1(7), g2(7), g3(8);
  a.init_parameters("uniform", 0.1, g1);
  b.init_parameters("uniform", 0.1, g2);
  c.init_parameters("uniform", 0.1, g3);
  const auto pa = a.parameters(), pb = b.parameters(), pc = c.parameters();
  double diff_c = 0;
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_EQ(max_abs_diff(pa[i].data(), pb[i].data()), 0.0);
    diff_c += max_abs_diff(pa[i].data(), pc[i].data());
    for (double v : pa[i].data().to_vector()) {
      EXPECT_LE(std::abs(v), 0.1);
      EXPECT_NE(v, 0.0);
    }
  }
  EXPECT_GT(diff_c, 0.0);
}

TEST(Init, RegistryListsInitialisersAndRejectsUnknownNames) {
  const auto names = InitRegistry::instance().names();
  EXPECT_EQ(names, (std::vector<std::string>{"normal", "uniform", "xavier_uniform"}));
  TwoLayers m;
  Generator g(1);
  EXPECT_NE(error_of([&] { m.init_parameters("glorot", 1.0, g); }).find("unknown name 'glorot'"), std::string::npos);
  m.init_parameters("xavier_uniform", 1.0, g);
  const double a = std::sqrt(6.0 / (3 + 4));  // first.weight is (3, 4)
  for (double v : m.first->weight().data().to_vector()) EXPECT_LE(std::abs(v), a);
}

TEST(Embedding, PaddingRowIsZeroAfterInitAndGetsNoGradient) {
  Embedding e(5, 3, 2, DType::f64);
  Generator g(3);
  e.init_parameters("uniform", 0.1, g);
  for (double v : e.weight().data().select(2).to_vector()) EXPECT_EQ(v, 0.0);
  Variable y = e.forward(Tensor::from_ids({2, 4, 2, 1}, {2, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  sum(y).backward();
  const auto gr = e.weight().grad().to_vector();
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(gr[static_cast<size_t>(2 * 3 + j)], 0.0);  // padding row
    EXPECT_EQ(gr[static_cast<size_t>(4 * 3 + j)], 1.0);
  }
  EXPECT_NE(error_of([] { Embedding bad(4, 3, 4); }).find("padding_idx 4"), std::string::npos);
}

TEST(Linear, MatchesHandComputedValues) {
  Linear l(2, 3, true, DType::f64);
  Tensor w = l.weight().data(), b = l.bias().data();  // handles on the parameters' storage
  w.copy_(Tensor::from({1, 2, 3, 4, 5, 6}, {2, 3}));
  b.copy_(Tensor::from({0.5, -1, 0}, {3}));
  Variable y = l.forward(Variable(Tensor::from({1, -1, 2, 0.5}, {2, 2}, DType::f64)));
  // [1, -1] W = [-3, -3, -3]; [2, 0.5] W = [4, 6.5, 9]
  EXPECT_EQ(y.data().to_vector(), (std::vector<double>{-2.5, -4, -3, 4.5, 5.5, 9}));
  EXPECT_NE(error_of([&] { l.forward(Variable(Tensor::zeros({2, 3}, DType::f64))); }).find("does not end in 2"),
            std::string::npos);
}

TEST(Layers, GradientsMatchFiniteDifferences) {
  TwoLayers m(DType::f64);
  Embedding e(6, 3, 0, DType::f64);
  Generator g(11);
  m.init_parameters("uniform", 0.5, g);
  e.init_parameters("uniform", 0.5, g);
  const Tensor ids = Tensor::from_ids({1, 4, 5, 3, 3, 2}, {2, 3});  // no padding id: its row has no gradient by design
  std::vector<Variable> inputs = m.parameters();
  for (auto& p : e.parameters()) inputs.push_back(p);
  const GradCheckResult r = gradcheck(
      [&](const std::vector<Variable>&) {
        Generator drop_gen(5);  // the same mask on every evaluation
        Variable x = e.forward(ids);                                              // (2, 3, 3)
        Variable h = mul(tanh(m.first->forward(x)), m.scale);                     // (2, 3, 4)
        return weighted_sum(m.second->forward(m.drop->forward(h, drop_gen)));    // (2, 3, 2)
      },
      inputs);
  EXPECT_LE(r.max_rel_error, 1e-6) << r.worst;
}

TEST(Dropout, IdentityInEvalAndNeedsAGeneratorInTraining) {
  Dropout d(0.5);
  Variable x(Tensor::full({4, 8}, 1.0));
  EXPECT_NE(error_of([&] { d.forward(x, nullptr); }).find("needs a generator"), std::string::npos);
  Generator g(1);
  auto v = d.forward(x, g).data().to_vector();
  int zeros = 0;
  for (double e : v) {
    EXPECT_TRUE(e == 0.0 || e == 2.0);
    zeros += e == 0.0;
  }
  EXPECT_GT(zeros, 4);
  EXPECT_LT(zeros, 28);
  d.eval();
  EXPECT_EQ(d.forward(x, nullptr).data().to_vector(), x.data().to_vector());
  EXPECT_NE(error_of([] { Dropout bad(1.0); }).find("[0, 1)"), std::string::npos);
}

TEST(FlatParameters, LayersReadTheRebuiltBuffers) {
  Linear l(2, 2, true);
  Generator g(2);
  l.init_parameters("uniform", 0.1, g);
  FlatParameters flat(l.parameters(), Device::cpu());
  flat.data().fill_(0.0);
  flat.data().narrow(flat.offset(1), 2).fill_(3.0);  // the bias
  Variable y = l.forward(Variable(Tensor::from({1, 2}, {1, 2})));
  EXPECT_EQ(y.data().to_vector(), (std::vector<double>{3, 3}));
  sum(y).backward();
  EXPECT_EQ(flat.grad().to_vector(), (std::vector<double>{1, 1, 2, 2, 1, 1}));
}

}  // namespace
}  // namespace luong::testing
