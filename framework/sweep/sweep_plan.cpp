#include "framework/sweep/sweep_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "framework/core/error.h"
#include "framework/core/philox.h"

namespace luong::sweep {
namespace {

constexpr size_t kMaxNameLength = 120;

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '+' || c == '-' || c == '_';
    out += ok ? c : '-';
  }
  // A name must not be "." or ".." or hidden.
  if (!out.empty() && out[0] == '.') out[0] = '-';
  return out;
}

std::string short_hash(const std::vector<std::string>& sets) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  for (const auto& s : sets) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // separator, so ("ab","c") != ("a","bc")
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%06llx", static_cast<unsigned long long>(h & 0xffffff));
  return buf;
}

// Of the varied values only (not the fixed overrides), so a name does not change when the spec's fixed overrides
// do; the sweep detects that case from the recorded settings instead.
std::string values_hash(const Trial& t) {
  std::vector<std::string> values;
  for (const auto& a : t.varied) values.push_back(a.key + "=" + a.value.yaml);
  return short_hash(values);
}

std::string last_part(const std::string& key) {
  const size_t dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

}  // namespace

// A uniform double in [0, 1) with 53 random bits (Generator::uniform has only 24: too coarse to pass
// full-precision learning rates to the trainer).
double uniform53(Generator& g) {
  const uint64_t start = g.reserve(4);
  const Philox4x32 r = philox4x32_10(start, 0, g.seed());
  const uint64_t bits = (static_cast<uint64_t>(r.v[0]) << 21) ^ (r.v[1] >> 11);
  return static_cast<double>(bits & ((uint64_t{1} << 53) - 1)) * 0x1p-53;
}

ParamValue draw_value(const RandomParam& p, Generator& g) {
  switch (p.dist) {
    case Distribution::choice:
      return p.choices[g.below(p.choices.size())];
    case Distribution::uniform:
      return number_value(p.lo + (p.hi - p.lo) * uniform53(g));
    case Distribution::loguniform: {
      const double a = std::log(p.lo), b = std::log(p.hi);
      return number_value(std::exp(a + (b - a) * uniform53(g)));
    }
  }
  return {};
}

std::vector<std::vector<Assignment>> sample_random(const SweepSpec& spec) {
  std::vector<std::vector<Assignment>> samples;
  Generator g(spec.random_seed);
  for (int64_t i = 0; i < spec.random_samples; ++i) {
    std::vector<Assignment> one;
    for (const auto& p : spec.random_params) one.push_back({p.key, draw_value(p, g)});
    samples.push_back(std::move(one));
  }
  return samples;
}

std::vector<std::string> varied_keys(const SweepSpec& spec) {
  std::vector<std::string> keys;
  for (const auto& a : spec.grid) keys.push_back(a.key);
  for (const auto& p : spec.random_params) keys.push_back(p.key);
  return keys;
}

std::vector<Trial> plan_trials(const SweepSpec& spec) {
  // parse_sweep_spec refuses such specs already; this guards specs built in code before anything is expanded.
  const int64_t count = trial_count(spec);
  if (count > kMaxTrials)
    LUONG_FAIL("sweep spec ", spec.file, ": the spec makes ", count, " trials, more than the limit of ", kMaxTrials);
  // Grid combinations, odometer style with the last axis fastest.
  std::vector<std::vector<Assignment>> combos(1);
  for (const auto& axis : spec.grid) {
    std::vector<std::vector<Assignment>> next;
    for (const auto& c : combos)
      for (const auto& v : axis.values) {
        next.push_back(c);
        next.back().push_back({axis.key, v});
      }
    combos = std::move(next);
  }
  // TPE: only its startup trials are drawn now (the first of the random sampler's sequence, so the two samplers'
  // sweeps on one seed start alike); the others are drawn as results come in.
  SweepSpec drawn_now = spec;
  if (spec.tpe()) drawn_now.random_samples = spec.tpe_startup;
  std::vector<std::vector<Assignment>> samples =
      spec.random_samples > 0 ? sample_random(drawn_now) : std::vector<std::vector<Assignment>>(1);
  std::vector<Trial> trials;
  std::set<std::vector<std::string>> seen;
  for (const auto& c : combos)
    for (const auto& r : samples) {
      Trial t;
      t.varied = c;
      t.varied.insert(t.varied.end(), r.begin(), r.end());
      t.sets = trial_sets(spec, t.varied);
      if (seen.insert(t.sets).second) trials.push_back(std::move(t));
    }
  assign_names(trials);
  for (int64_t k = spec.tpe() ? spec.tpe_startup : spec.random_samples; k < spec.random_samples; ++k) {
    Trial later;
    later.name = "tpe-draw-" + std::to_string(k + 1);
    later.drawn_later = true;
    trials.push_back(std::move(later));
  }
  return trials;
}

void name_drawn_trial(Trial& t, const std::function<bool(const std::string&)>& taken) {
  std::vector<Trial> one{t};
  assign_names(one);
  t.name = one.front().name;
  if (taken(t.name)) t.name.append("-").append(values_hash(t));
}

std::vector<std::string> trial_sets(const SweepSpec& spec, const std::vector<Assignment>& varied) {
  std::vector<std::string> sets;
  for (const auto& a : spec.overrides) sets.push_back(a.key + "=" + a.value.yaml);
  for (const auto& a : varied) sets.push_back(a.key + "=" + a.value.yaml);
  return sets;
}

bool value_allowed(const RandomParam& p, const std::string& yaml) {
  if (p.dist == Distribution::choice)
    return std::any_of(p.choices.begin(), p.choices.end(), [&](const ParamValue& c) { return c.yaml == yaml; });
  char* end = nullptr;
  const double v = std::strtod(yaml.c_str(), &end);
  return end != yaml.c_str() && *end == '\0' && v >= p.lo && v <= p.hi;  // NaN fails the bounds
}

void assign_names(std::vector<Trial>& trials) {
  // Short key names (the last dotted part) unless two varied keys share it.
  std::map<std::string, std::set<std::string>> keys_by_short;
  for (const auto& t : trials)
    for (const auto& a : t.varied) keys_by_short[last_part(a.key)].insert(a.key);
  std::map<std::string, int> count;
  for (auto& t : trials) {
    std::string name;
    for (const auto& a : t.varied) {
      const std::string s = last_part(a.key);
      const std::string& k = keys_by_short[s].size() > 1 ? a.key : s;
      if (!name.empty()) name += '_';
      name += sanitize(k + "-" + a.value.label);
    }
    t.name = name.empty() ? "base" : name;
    if (t.name.size() > kMaxNameLength) t.name = t.name.substr(0, kMaxNameLength);
    ++count[t.name];
  }
  for (auto& t : trials) {
    if (count[t.name] > 1 || t.name.size() == kMaxNameLength) t.name.append("-").append(values_hash(t));
  }
}

}  // namespace luong::sweep
