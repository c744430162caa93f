#include "tests/cuda/parity_cases.h"

#include "framework/ops/ops.h"

namespace luong::testing {

Variable CaseBuilder::leaf(const Shape& shape, double lo, double hi) {
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (auto& x : v) x = lo + (hi - lo) * gen_.uniform();
  inputs_.emplace_back(Tensor::from(v, shape, target_.dtype, target_.device), true);
  return inputs_.back();
}

Tensor CaseBuilder::mask(const std::vector<double>& values, const Shape& shape) const {
  return Tensor::from(values, shape, DType::u8, target_.device);
}

std::vector<double> CaseBuilder::random_bits(int64_t n, double keep) {
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = gen_.uniform() < keep ? 1.0 : 0.0;
  return v;
}

Tensor CaseBuilder::ids(const std::vector<int64_t>& values, const Shape& shape) const {
  return Tensor::from_ids(values, shape, target_.device);
}

Variable CaseBuilder::weighted_sum(const Variable& y, uint64_t seed) const {
  Generator g(seed);
  std::vector<double> w(static_cast<size_t>(y.data().numel()));
  for (auto& x : w) x = 2.0 * g.uniform() - 1.0;
  return sum(mul(y, Variable(Tensor::from(w, y.shape(), target_.dtype, target_.device))));
}

namespace {

Variable unary_case(CaseBuilder& b, Variable (*fn)(const Variable&), double lo = -2.0, double hi = 2.0) {
  return b.weighted_sum(fn(b.leaf({13, 257}, lo, hi)));
}

ParityCase binary_case(Variable (*fn)(const Variable&, const Variable&), bool positive_b) {
  return [fn, positive_b](CaseBuilder& b) {
    const double lo = positive_b ? 0.5 : -1.0, hi = positive_b ? 2.0 : 1.0;
    // Same shape; b broadcast over 360 rows (the chunked column-sum path); a broadcast over b's leading dim.
    Variable x = b.leaf({9, 40, 65}), y = b.leaf({9, 40, 65}, lo, hi), row = b.leaf({65}, lo, hi);
    Variable mat = b.leaf({40, 65}, lo, hi);
    Variable s = b.weighted_sum(fn(x, y), 1);
    s = add(s, b.weighted_sum(fn(x, row), 2));
    return add(s, b.weighted_sum(fn(mat, y), 3));
  };
}

// Random ids in [0, rows), with repeats.
std::vector<int64_t> random_ids(Generator& gen, int64_t n, int64_t rows) {
  std::vector<int64_t> ids(static_cast<size_t>(n));
  for (auto& id : ids) id = static_cast<int64_t>(gen.below(static_cast<uint64_t>(rows)));
  return ids;
}

void add_linear_algebra(std::map<std::string, ParityCase>& c) {
  c["matmul"] = [](CaseBuilder& b) { return b.weighted_sum(matmul(b.leaf({3, 37, 129}), b.leaf({129, 65}))); };
  c["bmm"] = [](CaseBuilder& b) {
    Variable a = b.leaf({5, 33, 70}), x = b.leaf({5, 70, 41}), xt = b.leaf({5, 41, 70});
    return add(b.weighted_sum(bmm(a, x)), b.weighted_sum(bmm(a, xt, true), 7));
  };
  c["lstm_cell"] = [](CaseBuilder& b) {
    const int64_t B = 37, I = 129, H = 65;
    Variable x = b.leaf({B, I}), h = b.leaf({B, H}), cell = b.leaf({B, H}), W = b.leaf({I, 4 * H}, -0.3, 0.3);
    Variable U = b.leaf({H, 4 * H}, -0.3, 0.3), bias = b.leaf({4 * H}), proj = b.leaf({B, 4 * H});
    LstmState s = lstm_cell(x, {h, cell}, W, U, bias);
    LstmState s2 = lstm_cell(proj, s, Variable(), U, bias);
    return add(add(b.weighted_sum(s2.h, 1), b.weighted_sum(s2.c, 2)), b.weighted_sum(s.c, 3));
  };
  c["attention_step"] = [](CaseBuilder& b) {
    const int64_t B = 37, S = 23, H = 129;
    Variable q = b.leaf({B, H}, -0.5, 0.5), k = b.leaf({B, S, H}, -0.5, 0.5), v = b.leaf({B, S, H});
    std::vector<double> keep(static_cast<size_t>(B * S), 1.0);
    for (int64_t r = 0; r < B; ++r)  // every row a prefix of (r % S) + 1 real positions; row 5 fully masked
      for (int64_t j = r % S + 1; j < S; ++j) keep[static_cast<size_t>(r * S + j)] = 0.0;
    for (int64_t j = 0; j < S; ++j) keep[static_cast<size_t>(5 * S + j)] = 0.0;
    AttentionStep a = attention_step(q, k, v, b.mask(keep, {B, S}));
    AttentionStep self = attention_step(q, k, k, Tensor());  // keys = values: one gradient buffer for both
    Variable s = add(b.weighted_sum(a.context, 1), b.weighted_sum(a.weights, 2));
    return add(s, add(b.weighted_sum(self.context, 3), b.weighted_sum(self.weights, 4)));
  };
  c["lstm_sequence"] = [](CaseBuilder& b) {
    const int64_t T = 7, B = 37, H = 65;
    Variable proj = b.leaf({T, B, 4 * H}), h = b.leaf({B, H}), cell = b.leaf({B, H});
    Variable U = b.leaf({H, 4 * H}, -0.3, 0.3), bias = b.leaf({4 * H});
    std::vector<int64_t> lengths(static_cast<size_t>(B));
    for (int64_t i = 0; i < B; ++i) lengths[static_cast<size_t>(i)] = 1 + (i * 5) % T;
    LstmSequenceResult f = lstm_sequence(proj, {h, cell}, U, bias, lengths, false);
    LstmSequenceResult r = lstm_sequence(proj, {h, cell}, U, bias, lengths, true);
    Variable s = add(b.weighted_sum(f.outputs, 1), b.weighted_sum(f.final.c, 2));
    return add(s, add(b.weighted_sum(r.outputs, 3), b.weighted_sum(r.final.h, 4)));
  };
}

void add_elementwise(std::map<std::string, ParityCase>& c) {
  c["add"] = binary_case(&add, false);
  c["sub"] = binary_case(&sub, false);
  c["mul"] = binary_case(&mul, false);
  c["div"] = binary_case(&div, true);
  c["add_scalar"] = [](CaseBuilder& b) { return b.weighted_sum(add_scalar(b.leaf({17, 301}), 0.7)); };
  c["mul_scalar"] = [](CaseBuilder& b) { return b.weighted_sum(mul_scalar(b.leaf({17, 301}), -1.3)); };
  c["tanh"] = [](CaseBuilder& b) { return unary_case(b, &tanh); };
  c["sigmoid"] = [](CaseBuilder& b) { return unary_case(b, &sigmoid); };
  c["relu"] = [](CaseBuilder& b) { return unary_case(b, &relu); };
  c["exp"] = [](CaseBuilder& b) { return unary_case(b, &exp, -1.5, 1.5); };
  c["log"] = [](CaseBuilder& b) { return unary_case(b, &log, 0.3, 2.0); };
  c["dropout"] = [](CaseBuilder& b) {
    Variable x = b.leaf({33, 129});
    Generator gen(1234, 5);  // the same (seed, offset) on both devices: Philox gives the same mask
    return b.weighted_sum(dropout(x, 0.3, gen, true));
  };
  c["masked_fill"] = [](CaseBuilder& b) {
    Variable x = b.leaf({13, 7, 33});
    Tensor suffix = b.mask(b.random_bits(33, 0.6), {33});
    Tensor full = b.mask(b.random_bits(13 * 7 * 33, 0.5), {13, 7, 33});
    return add(b.weighted_sum(masked_fill(x, suffix, -3.0), 1), b.weighted_sum(masked_fill(x, full, 0.25), 2));
  };
}

void add_softmax_family(std::map<std::string, ParityCase>& c) {
  c["softmax"] = [](CaseBuilder& b) {
    Variable x = b.leaf({37, 1031}, -3, 3), small = b.leaf({19, 7}, -3, 3);
    std::vector<double> keep = b.random_bits(37 * 1031, 0.7);
    for (int64_t j = 0; j < 1031; ++j) keep[static_cast<size_t>(5 * 1031 + j)] = 0.0;  // a fully masked row
    Variable s = add(b.weighted_sum(softmax(x), 1), b.weighted_sum(softmax(x, b.mask(keep, {37, 1031})), 2));
    return add(s, b.weighted_sum(softmax(small), 3));
  };
  c["log_softmax"] = [](CaseBuilder& b) {
    Variable x = b.leaf({37, 1031}, -3, 3);
    std::vector<double> keep = b.random_bits(37 * 1031, 0.7), drop(keep.size());
    for (int64_t j = 0; j < 1031; ++j) keep[static_cast<size_t>(8 * 1031 + j)] = 0.0;
    for (size_t i = 0; i < keep.size(); ++i) drop[i] = 1.0 - keep[i];
    // Masked positions are -inf: zero them before weighting (as the gradient-check case does).
    Variable masked = masked_fill(log_softmax(x, b.mask(keep, {37, 1031})), b.mask(drop, {37, 1031}), 0.0);
    return add(b.weighted_sum(log_softmax(x), 1), b.weighted_sum(masked, 2));
  };
  c["cross_entropy"] = [](CaseBuilder& b) {
    const int64_t rows = 67, vocab = 5003;
    Variable logits = b.leaf({rows, vocab}, -4, 4);
    std::vector<int64_t> t = random_ids(b.gen(), rows, vocab);
    t[3] = t[40] = -100;
    Tensor targets = b.ids(t, {rows});
    return add(cross_entropy(logits, targets).loss, mul_scalar(cross_entropy(logits, targets, -100, 0.1).loss, 0.5));
  };
  c["linear_cross_entropy"] = [](CaseBuilder& b) {
    const int64_t rows = 67, hidden = 45, vocab = 5003;
    Variable x = b.leaf({rows, hidden}, -1, 1);
    Variable w = b.leaf({hidden, vocab}, -0.3, 0.3);
    Variable bias = b.leaf({vocab}, -1, 1);
    std::vector<int64_t> t = random_ids(b.gen(), rows, vocab);
    t[3] = t[40] = -100;
    Tensor targets = b.ids(t, {rows});
    return add(linear_cross_entropy(x, w, bias, targets).loss,
               mul_scalar(linear_cross_entropy(x, w, Variable(), targets, -100, 0.1, 16).loss, 0.5));  // 5 chunks
  };
}

void add_gather_and_shape(std::map<std::string, ParityCase>& c) {
  c["embedding"] = [](CaseBuilder& b) {
    Variable w = b.leaf({50, 33});
    Tensor ids = b.ids(random_ids(b.gen(), 7 * 41, 50), {7, 41});
    // Second lookup with a padding id that occurs: its row must get no gradient from that lookup.
    return add(b.weighted_sum(embedding(w, ids), 1), b.weighted_sum(embedding(w, ids, 3), 2));
  };
  c["slice"] = [](CaseBuilder& b) {
    Variable x = b.leaf({6, 37, 9});
    Variable s = b.weighted_sum(slice(x, 0, 1, 4), 1);
    s = add(s, b.weighted_sum(slice(x, 1, 5, 20), 2));
    s = add(s, b.weighted_sum(select(x, 2, 7), 3));
    return add(s, b.weighted_sum(split(x, {17, 20}, 1)[1], 4));
  };
  c["concat"] = [](CaseBuilder& b) {
    Variable x = b.leaf({5, 17}), y = b.leaf({5, 23}), z = b.leaf({2, 17});
    Variable s = b.weighted_sum(concat({x, y}, 1), 1);
    s = add(s, b.weighted_sum(concat({x, z}, 0), 2));
    return add(s, b.weighted_sum(stack({x, x}), 3));
  };
  c["transpose"] = [](CaseBuilder& b) {
    Variable x = b.leaf({3, 7, 5, 11});
    return add(b.weighted_sum(transpose(x, 1, 3), 1), b.weighted_sum(transpose(x, 0, 1), 2));
  };
  c["reshape"] = [](CaseBuilder& b) { return b.weighted_sum(reshape(b.leaf({6, 35}), {-1, 7})); };
}

void add_reductions(std::map<std::string, ParityCase>& c) {
  c["sum"] = [](CaseBuilder& b) { return mul_scalar(sum(b.leaf({301, 257})), 1.7); };
  c["sum_dim"] = [](CaseBuilder& b) {
    Variable x = b.leaf({5, 300, 7}), rows = b.leaf({9, 700});
    Variable s = add(b.weighted_sum(sum(x, 1), 1), b.weighted_sum(sum(x, -1), 2));
    return add(s, b.weighted_sum(sum(rows, -1), 3));  // long last dim: the block-per-row path
  };
  c["mean"] = [](CaseBuilder& b) {
    Variable x = b.leaf({41, 57});
    return mean(mul(x, x));
  };
}

}  // namespace

std::map<std::string, ParityCase> parity_cases() {
  std::map<std::string, ParityCase> c;
  add_linear_algebra(c);
  add_elementwise(c);
  add_softmax_family(c);
  add_gather_and_shape(c);
  add_reductions(c);
  return c;
}

}  // namespace luong::testing
