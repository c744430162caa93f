#include "tests/ops/op_cases.h"

namespace luong::testing {
namespace {

Tensor mask_u8(const Shape& shape, const std::vector<int>& zero_at) {
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)), 1.0);
  for (int i : zero_at) v[static_cast<size_t>(i)] = 0.0;
  return Tensor::from(v, shape, DType::u8);
}

OpCase unary(Generator& g, Variable (*fn)(const Variable&), double lo = -1.5, double hi = 1.5) {
  return {{random_leaf(g, {3, 5}, lo, hi)}, [fn](const std::vector<Variable>& v) { return weighted_sum(fn(v[0])); }};
}

}  // namespace

std::map<std::string, std::function<OpCase(Generator&)>> op_cases() {
  std::map<std::string, std::function<OpCase(Generator&)>> c;
  c["matmul"] = [](Generator& g) {
    return OpCase{{random_leaf(g, {2, 3, 5}), random_leaf(g, {5, 4})},
                  [](const std::vector<Variable>& v) { return weighted_sum(matmul(v[0], v[1])); }};
  };
  c["bmm"] = [](Generator& g) {
    return OpCase{{random_leaf(g, {2, 3, 5}), random_leaf(g, {2, 5, 4}), random_leaf(g, {2, 4, 5})},
                  [](const std::vector<Variable>& v) {
                    return add(weighted_sum(bmm(v[0], v[1])), weighted_sum(bmm(v[0], v[2], true), 7));
                  }};
  };
  auto binary = [](Variable (*fn)(const Variable&, const Variable&), bool positive_b) {
    return [fn, positive_b](Generator& g) {
      const double lo = positive_b ? 0.5 : -1.0, hi = positive_b ? 2.0 : 1.0;
      // same shape, b broadcast over a's leading dims, and a broadcast over b's
      return OpCase{{random_leaf(g, {2, 3, 4}), random_leaf(g, {2, 3, 4}, lo, hi), random_leaf(g, {4}, lo, hi),
                     random_leaf(g, {3, 4}, lo, hi)},
                    [fn](const std::vector<Variable>& v) {
                      Variable s = weighted_sum(fn(v[0], v[1]), 1);
                      s = add(s, weighted_sum(fn(v[0], v[2]), 2));
                      return add(s, weighted_sum(fn(v[3], v[1]), 3));
                    }};
    };
  };
  c["add"] = binary(&add, false);
  c["sub"] = binary(&sub, false);
  c["mul"] = binary(&mul, false);
  c["div"] = binary(&div, true);
  c["add_scalar"] = [](Generator& g) {
    return OpCase{{random_leaf(g, {3, 4})},
                  [](const std::vector<Variable>& v) { return weighted_sum(add_scalar(v[0], 0.7)); }};
  };
  c["mul_scalar"] = [](Generator& g) {
    return OpCase{{random_leaf(g, {3, 4})},
                  [](const std::vector<Variable>& v) { return weighted_sum(mul_scalar(v[0], -1.3)); }};
  };
  c["tanh"] = [](Generator& g) { return unary(g, &tanh); };
  c["sigmoid"] = [](Generator& g) { return unary(g, &sigmoid); };
  c["relu"] = [](Generator& g) { return unary(g, &relu); };
  c["exp"] = [](Generator& g) { return unary(g, &exp); };
  c["log"] = [](Generator& g) { return unary(g, &log, 0.3, 2.0); };
  c["softmax"] = [](Generator& g) {
    Tensor m = mask_u8({3, 5}, {1, 4, 13});
    return OpCase{{random_leaf(g, {3, 5}, -2, 2)}, [m](const std::vector<Variable>& v) {
                    return add(weighted_sum(softmax(v[0])), weighted_sum(softmax(v[0], m), 5));
                  }};
  };
  c["log_softmax"] = [](Generator& g) {
    Tensor m = mask_u8({3, 5}, {0, 7});
    return OpCase{{random_leaf(g, {3, 5}, -2, 2)}, [m](const std::vector<Variable>& v) {
                    // Masked positions are -inf in the output: weight them by zero via masked_fill.
                    Variable masked = masked_fill(log_softmax(v[0], m), mask_u8({3, 5}, {1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14}), 0.0);
                    return add(weighted_sum(log_softmax(v[0])), weighted_sum(masked, 5));
                  }};
  };
  c["cross_entropy"] = [](Generator& g) {
    Tensor t = Tensor::from_ids({2, 0, -100, 6, 3}, {5});
    return OpCase{{random_leaf(g, {5, 7}, -2, 2)}, [t](const std::vector<Variable>& v) {
                    return add(cross_entropy(v[0], t).loss, mul_scalar(cross_entropy(v[0], t, -100, 0.1).loss, 0.5));
                  }};
  };
  c["linear_cross_entropy"] = [](Generator& g) {
    Tensor t = Tensor::from_ids({2, 0, -100, 6, 3}, {5});
    return OpCase{{random_leaf(g, {5, 4}), random_leaf(g, {4, 7}), random_leaf(g, {7})},
                  [t](const std::vector<Variable>& v) {
                    Variable plain = linear_cross_entropy(v[0], v[1], v[2], t).loss;
                    // In chunks of 2 rows (the last one short, one holding the ignored row), and scaled below: the
                    // chunked path and an upstream gradient other than 1.
                    Variable smoothed = linear_cross_entropy(v[0], v[1], Variable(), t, -100, 0.1, 2).loss;
                    return add(plain, mul_scalar(smoothed, 0.5));
                  }};
  };
  c["embedding"] = [](Generator& g) {
    Tensor ids = Tensor::from_ids({1, 3, 0, 3, 5, 1}, {2, 3});
    return OpCase{{random_leaf(g, {6, 4})}, [ids](const std::vector<Variable>& v) {
                    // padding_idx names an id that is not looked up: the padding rule is tested on its own.
                    return add(weighted_sum(embedding(v[0], ids)), weighted_sum(embedding(v[0], ids, 4), 4));
                  }};
  };
  c["slice"] = [](Generator& g) {
    return OpCase{{random_leaf(g, {4, 5, 3})}, [](const std::vector<Variable>& v) {
                    Variable s = weighted_sum(slice(v[0], 0, 1, 2), 1);
                    s = add(s, weighted_sum(slice(v[0], 1, 2, 3), 2));
                    s = add(s, weighted_sum(select(v[0], 2, 1), 3));
                    return add(s, weighted_sum(split(v[0], {2, 3}, 1)[1], 4));
                  }};
  };
  c["concat"] = [](Generator& g) {
    return OpCase{{random_leaf(g, {2, 3}), random_leaf(g, {2, 4}), random_leaf(g, {1, 3})},
                  [](const std::vector<Variable>& v) {
                    Variable s = weighted_sum(concat({v[0], v[1]}, 1), 1);
                    s = add(s, weighted_sum(concat({v[0], v[2]}, 0), 2));
                    return add(s, weighted_sum(stack({v[0], v[0]}), 3));
                  }};
  };
  c["transpose"] = [](Generator& g) {
    return OpCase{{random_leaf(g, {2, 3, 4, 5})}, [](const std::vector<Variable>& v) {
                    return add(weighted_sum(transpose(v[0], 1, 3), 1), weighted_sum(transpose(v[0], 0, 1), 2));
                  }};
  };
  c["reshape"] = [](Generator& g) {
    return OpCase{{random_leaf(g, {2, 3, 4})},
                  [](const std::vector<Variable>& v) { return weighted_sum(reshape(v[0], {6, -1})); }};
  };
  c["sum"] = [](Generator& g) {
    return OpCase{{random_leaf(g, {3, 4})}, [](const std::vector<Variable>& v) { return mul_scalar(sum(v[0]), 1.7); }};
  };
  c["sum_dim"] = [](Generator& g) {
    return OpCase{{random_leaf(g, {2, 3, 4})}, [](const std::vector<Variable>& v) {
                    return add(weighted_sum(sum(v[0], 1), 1), weighted_sum(sum(v[0], -1), 2));
                  }};
  };
  c["mean"] = [](Generator& g) {
    return OpCase{{random_leaf(g, {3, 5})}, [](const std::vector<Variable>& v) { return mean(mul(v[0], v[0])); }};
  };
  c["dropout"] = [](Generator& g) {
    // The same generator state each call, so the finite differences see the same mask as backward.
    return OpCase{{random_leaf(g, {4, 7})}, [](const std::vector<Variable>& v) {
                    Generator gen(1234);
                    return weighted_sum(dropout(v[0], 0.4, gen, true));
                  }};
  };
  c["masked_fill"] = [](Generator& g) {
    Tensor m = mask_u8({4}, {0, 2});
    return OpCase{{random_leaf(g, {3, 4})},
                  [m](const std::vector<Variable>& v) { return weighted_sum(masked_fill(v[0], m, -3.0)); }};
  };
  c["lstm_cell"] = [](Generator& g) {
    const int64_t B = 3, I = 5, H = 4;
    return OpCase{{random_leaf(g, {B, I}), random_leaf(g, {B, H}), random_leaf(g, {B, H}), random_leaf(g, {I, 4 * H}),
                   random_leaf(g, {H, 4 * H}), random_leaf(g, {4 * H}), random_leaf(g, {B, 4 * H})},
                  [](const std::vector<Variable>& v) {
                    LstmState s = lstm_cell(v[0], {v[1], v[2]}, v[3], v[4], v[5]);
                    // A second step on a precomputed projection (no W), and only c used from the first.
                    LstmState s2 = lstm_cell(v[6], s, Variable(), v[4], v[5]);
                    return add(add(weighted_sum(s2.h, 1), weighted_sum(s2.c, 2)), weighted_sum(s.c, 3));
                  }};
  };
  c["lstm_sequence"] = [](Generator& g) {
    const int64_t T = 4, B = 3, H = 2;
    return OpCase{{random_leaf(g, {T, B, 4 * H}), random_leaf(g, {B, H}), random_leaf(g, {B, H}),
                   random_leaf(g, {H, 4 * H}), random_leaf(g, {4 * H})},
                  [](const std::vector<Variable>& v) {
                    // Mixed lengths (padding carried) in both directions; outputs and final state all used.
                    const std::vector<int64_t> lengths{4, 2, 3};
                    LstmSequenceResult f = lstm_sequence(v[0], {v[1], v[2]}, v[3], v[4], lengths, false);
                    LstmSequenceResult r = lstm_sequence(v[0], {v[1], v[2]}, v[3], v[4], lengths, true);
                    Variable s = add(weighted_sum(f.outputs, 1), weighted_sum(f.final.c, 2));
                    s = add(s, add(weighted_sum(r.outputs, 3), weighted_sum(r.final.h, 4)));
                    return add(s, weighted_sum(f.final.h, 5));
                  }};
  };
  c["attention_step"] = [](Generator& g) {
    const int64_t B = 3, S = 4, H = 5;
    // Row 1 padded after 2 positions, row 2 fully masked (zero weights and context, zero gradients).
    Tensor m = mask_u8({B, S}, {6, 7, 8, 9, 10, 11});
    return OpCase{{random_leaf(g, {B, H}), random_leaf(g, {B, S, H}), random_leaf(g, {B, S, H})},
                  [m](const std::vector<Variable>& v) {
                    AttentionStep a = attention_step(v[0], v[1], v[2], m);
                    AttentionStep self = attention_step(v[0], v[1], v[1], Tensor());  // keys = values, no mask
                    Variable s = add(weighted_sum(a.context, 1), weighted_sum(a.weights, 2));
                    return add(s, add(weighted_sum(self.context, 3), weighted_sum(self.weights, 4)));
                  }};
  };
  return c;
}

}  // namespace luong::testing
