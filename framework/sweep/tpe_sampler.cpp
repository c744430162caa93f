#include "framework/sweep/tpe_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "framework/core/philox.h"
#include "framework/sweep/sweep_plan.h"

namespace luong::sweep {
namespace {

constexpr double kLogZero = -std::numeric_limits<double>::infinity();

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// log(sum exp(v)) without overflow.
double log_sum_exp(const std::vector<double>& v) {
  const double top = *std::max_element(v.begin(), v.end());
  if (!std::isfinite(top)) return top;
  double sum = 0.0;
  for (double x : v) sum += std::exp(x - top);
  return top + std::log(sum);
}

// A mixture of equally weighted Gaussians truncated to [lo, hi): the prior (centred, as wide as the range) and one
// at each observed value, as wide as the larger gap to its neighbours (the bounds at the ends), clipped to
// [range / min(100, n + 1), range] (hyperopt's adaptive Parzen bandwidth): dense clusters of good values give
// narrow peaks, a lone value a wide one.
class Parzen {
 public:
  Parzen(std::vector<double> xs, double lo, double hi) : lo_(lo), hi_(hi) {
    const double range = hi - lo;
    mu_.push_back(0.5 * (lo + hi));
    sigma_.push_back(range);
    std::sort(xs.begin(), xs.end());
    const double narrowest = range / std::min(100.0, static_cast<double>(xs.size()) + 1.0);
    for (size_t i = 0; i < xs.size(); ++i) {
      const double left = i == 0 ? lo : xs[i - 1], right = i + 1 == xs.size() ? hi : xs[i + 1];
      mu_.push_back(xs[i]);
      sigma_.push_back(std::clamp(std::max(xs[i] - left, right - xs[i]), narrowest, range));
    }
  }

  double log_density(double x) const {
    std::vector<double> terms;
    for (size_t k = 0; k < mu_.size(); ++k) {
      const double z = (x - mu_[k]) / sigma_[k];
      const double mass = normal_cdf((hi_ - mu_[k]) / sigma_[k]) - normal_cdf((lo_ - mu_[k]) / sigma_[k]);
      terms.push_back(-0.5 * z * z - std::log(sigma_[k] * std::sqrt(2.0 * M_PI) * mass));
    }
    return log_sum_exp(terms) - std::log(static_cast<double>(mu_.size()));
  }

  // A component at random, then a value of it inside [lo, hi) by rejection (each component has at least about a
  // sixth of its mass there); the rare run of misses takes a uniform value.
  double sample(Generator& g) const {
    const size_t k = g.below(mu_.size());
    for (int attempt = 0; attempt < 100; ++attempt) {
      const double x = mu_[k] + sigma_[k] * g.normal();
      if (x >= lo_ && x < hi_) return x;
    }
    return lo_ + (hi_ - lo_) * uniform53(g);
  }

 private:
  double lo_, hi_;
  std::vector<double> mu_, sigma_;
};

// A categorical density over a choice's values: each value's count among the observations plus one (so a value no
// trial tried keeps a chance).
class CategoricalCounts {
 public:
  CategoricalCounts(const std::vector<size_t>& picks, size_t n) : weight_(n, 1.0) {
    for (size_t p : picks) weight_[p] += 1.0;
    for (double w : weight_) total_ += w;
  }
  double log_density(size_t k) const { return std::log(weight_[k] / total_); }
  size_t sample(Generator& g) const {
    double u = uniform53(g) * total_;
    for (size_t k = 0; k < weight_.size(); ++k)
      if ((u -= weight_[k]) < 0.0) return k;
    return weight_.size() - 1;
  }

 private:
  std::vector<double> weight_;
  double total_ = 0.0;
};

// The yaml text of the observations' values of `key` (trials without it, or with a value that is not a number
// for a numeric parameter, are left out).
std::vector<std::string> values_of(const std::vector<std::vector<Assignment>>& group, const std::string& key) {
  std::vector<std::string> out;
  for (const auto& trial : group)
    for (const auto& a : trial)
      if (a.key == key) out.push_back(a.value.yaml);
  return out;
}

// Numeric parameters are modelled where the random sampler is uniform: log space for loguniform.
double to_space(const RandomParam& p, double v) { return p.dist == Distribution::loguniform ? std::log(v) : v; }

std::vector<double> numbers(const RandomParam& p, const std::vector<std::string>& yaml) {
  std::vector<double> out;
  for (const auto& y : yaml)
    if (value_allowed(p, y)) out.push_back(to_space(p, std::strtod(y.c_str(), nullptr)));
  return out;
}

std::vector<size_t> choice_indices(const RandomParam& p, const std::vector<std::string>& yaml) {
  std::vector<size_t> out;
  for (const auto& y : yaml)
    for (size_t k = 0; k < p.choices.size(); ++k)
      if (p.choices[k].yaml == y) out.push_back(k);
  return out;
}

// The candidate of kTpeCandidates draws from `below` with the largest log l(x) - log g(x); ties to the first drawn.
template <typename Density, typename Value>
Value best_candidate(const Density& below, const Density& above, Generator& g) {
  Value best{};
  double best_score = kLogZero;
  for (int c = 0; c < kTpeCandidates; ++c) {
    const Value x = below.sample(g);
    const double score = below.log_density(x) - above.log_density(x);
    if (c == 0 || score > best_score) best = x, best_score = score;
  }
  return best;
}

// A Philox key of its own for each draw, apart from the startup trials' stream (key = the seed itself).
uint64_t draw_key(uint64_t seed, uint64_t draw) {
  uint64_t z = seed ^ (0x7470655f64726177ull + draw * 0x9e3779b97f4a7c15ull);  // "tpe_draw"
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;                                 // splitmix64's finaliser
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

size_t tpe_below_count(size_t n) { return std::max<size_t>(1, (n + 3) / 4); }

std::vector<size_t> tpe_ranking(const std::vector<TrialResult>& results, const SweepSpec& spec,
                                const std::vector<size_t>& running) {
  // Lower key is better: the value itself in min mode, its negation in max mode; NaN and infinities after all.
  const auto key = [](std::optional<double> v, const std::string& mode) {
    if (!v || !std::isfinite(*v)) return std::numeric_limits<double>::infinity();
    return mode == "max" ? -*v : *v;
  };
  struct Row {
    size_t index;
    int group;  // 0: finished ok, 1: stopped early
    int64_t steps;
    double key;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < results.size(); ++i) {
    const TrialResult& r = results[i];
    if (r.status == TrialStatus::ok && r.metric(spec.metric))
      rows.push_back({i, 0, 0, key(r.metric(spec.metric), spec.mode)});
    else if (spec.prune.enabled && (r.status == TrialStatus::pruned || r.status == TrialStatus::waiting))
      rows.push_back({i, 1, r.steps, key(r.metric(spec.prune.metric), spec.prune.mode)});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.group != b.group) return a.group < b.group;
    if (a.steps != b.steps) return a.steps > b.steps;
    return a.key < b.key;
  });
  std::vector<size_t> order;
  for (const Row& r : rows) order.push_back(r.index);
  if (order.size() >= kTpeMinObservations) order.insert(order.end(), running.begin(), running.end());
  return order;
}

std::vector<Assignment> tpe_draw(const std::vector<RandomParam>& params,
                                 const std::vector<std::vector<Assignment>>& ranked, uint64_t seed, uint64_t draw) {
  Generator g(draw_key(seed, draw));
  std::vector<Assignment> out;
  if (ranked.size() < kTpeMinObservations) {
    for (const auto& p : params) out.push_back({p.key, draw_value(p, g)});
    return out;
  }
  const auto split = ranked.begin() + static_cast<std::ptrdiff_t>(tpe_below_count(ranked.size()));
  const std::vector<std::vector<Assignment>> below(ranked.begin(), split), above(split, ranked.end());
  for (const auto& p : params) {
    if (p.dist == Distribution::choice) {
      const size_t n = p.choices.size();
      const CategoricalCounts l(choice_indices(p, values_of(below, p.key)), n);
      const CategoricalCounts gd(choice_indices(p, values_of(above, p.key)), n);
      out.push_back({p.key, p.choices[best_candidate<CategoricalCounts, size_t>(l, gd, g)]});
      continue;
    }
    const double lo = to_space(p, p.lo), hi = to_space(p, p.hi);
    const Parzen l(numbers(p, values_of(below, p.key)), lo, hi), gd(numbers(p, values_of(above, p.key)), lo, hi);
    const double x = best_candidate<Parzen, double>(l, gd, g);
    const double v = p.dist == Distribution::loguniform ? std::exp(x) : x;
    out.push_back({p.key, number_value(std::clamp(v, p.lo, p.hi))});  // exp(log hi) may round past hi
  }
  return out;
}

}  // namespace luong::sweep
