#include "tests/nn/attention_reference.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

namespace luong::testing {
namespace {

using Params = std::map<std::string, std::vector<double>>;

// score(h_t, h̄_s) for one source state, eq. 8. W is (in, out) row-major as the layers store it.
double score(const std::string& kind, const Params& p, const double* h, const double* hs, int64_t H) {
  double out = 0;
  if (kind == "dot") {
    for (int64_t i = 0; i < H; ++i) out += h[i] * hs[i];
  } else if (kind == "general") {
    const auto& W = p.at("score.weight");
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < H; ++j) out += h[i] * W[static_cast<size_t>(i * H + j)] * hs[j];
  } else if (kind == "concat") {
    const auto& W = p.at("score.weight");  // (2H, H)
    const auto& v = p.at("score.v");       // (H, 1)
    for (int64_t j = 0; j < H; ++j) {
      double a = 0;
      for (int64_t i = 0; i < H; ++i) a += h[i] * W[static_cast<size_t>(i * H + j)];
      for (int64_t i = 0; i < H; ++i) a += hs[i] * W[static_cast<size_t>((H + i) * H + j)];
      out += v[static_cast<size_t>(j)] * std::tanh(a);
    }
  } else {
    ADD_FAILURE() << "no reference score for '" << kind << "'";
  }
  return out;
}

bool is_global(const std::string& v) { return v == "dot" || v == "general" || v == "concat"; }

}  // namespace

bool has_attention_reference(const std::string& variant) {
  return is_global(variant) || variant == "local-m" || variant == "local-p";
}

AttentionReference attention_reference(const std::string& variant, const AttentionOptions& opt,
                                       const Attention& attention, const Tensor& h_t, const Tensor& memory,
                                       const std::vector<int64_t>& lengths, int64_t t) {
  Params p;
  for (auto& [name, v] : attention.named_parameters()) p[name] = v.data().to_vector();
  const int64_t B = memory.size(0), S = memory.size(1), H = memory.size(2);
  const std::vector<double> h = h_t.to_vector(), m = memory.to_vector();
  const std::string kind = is_global(variant) ? variant : opt.score;
  const double D = static_cast<double>(opt.window);
  AttentionReference r;
  r.weights.assign(static_cast<size_t>(B * S), 0.0);
  r.context.assign(static_cast<size_t>(B * H), 0.0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = lengths[static_cast<size_t>(b)];
    const double* hb = h.data() + b * H;
    // The positions taking part, and the aligned position p_t of the local variants.
    double center = 0;
    if (variant == "local-m") center = static_cast<double>(std::min(t, len - 1));
    if (variant == "local-p") {  // eq. 9
      const auto& Wp = p.at("weight_p");
      const auto& vp = p.at("v_p");
      double z = 0;
      for (int64_t j = 0; j < H; ++j) {
        double a = 0;
        for (int64_t i = 0; i < H; ++i) a += hb[i] * Wp[static_cast<size_t>(i * H + j)];
        z += vp[static_cast<size_t>(j)] * std::tanh(a);
      }
      center = static_cast<double>(len) / (1.0 + std::exp(-z));
    }
    std::vector<int64_t> window;
    for (int64_t s = 0; s < len; ++s)
      if (is_global(variant) || std::abs(static_cast<double>(s) - center) <= D) window.push_back(s);
    double mx = -1e300, total = 0;
    std::vector<double> e;
    for (int64_t s : window) e.push_back(score(kind, p, hb, m.data() + (b * S + s) * H, H));
    for (double x : e) mx = std::max(mx, x);
    for (double& x : e) total += (x = std::exp(x - mx));
    for (size_t k = 0; k < window.size(); ++k) {
      const int64_t s = window[k];
      double w = e[k] / total;  // eq. 7 over the window
      if (variant == "local-p") {  // eq. 10, sigma = D / 2
        const double d = static_cast<double>(s) - center, sigma = D / 2;
        w *= std::exp(-d * d / (2 * sigma * sigma));
      }
      r.weights[static_cast<size_t>(b * S + s)] = w;
      for (int64_t i = 0; i < H; ++i)
        r.context[static_cast<size_t>(b * H + i)] += w * m[static_cast<size_t>((b * S + s) * H + i)];
    }
  }
  return r;
}

}  // namespace luong::testing
