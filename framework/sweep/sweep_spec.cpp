#include "framework/sweep/sweep_spec.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "framework/core/error.h"
#include "framework/io/config_schema.h"
#include "framework/io/config_value.h"

namespace luong::sweep {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kTopKeys = {"base", "overrides", "grid", "random", "metric", "mode", "launch", "parallel"};
const std::vector<std::string> kRandomKeys = {"samples", "seed", "params"};
const std::vector<std::string> kDistributions = {"choice", "uniform", "loguniform"};

// Builds errors of the form "sweep spec FILE:LINE: KEY: message".
class SpecReader {
 public:
  explicit SpecReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& msg) const {
    const YAML::Mark m = at.Mark();
    const std::string where = m.line >= 0 ? str(file_, ":", m.line + 1) : file_;
    LUONG_FAIL("sweep spec ", where, ": ", key.empty() ? "" : key + ": ", msg);
  }

  ParamValue scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar() && !n.IsNull()) fail(n, key, "expected a single value, got " + describe_node(n));
    if (n.IsNull()) return {"", ""};
    const std::string text = n.Scalar();
    // A quoted scalar stays a string when re-read by `--set` (e.g. '"yes"' must not become a boolean).
    if (n.Tag() == "!") {
      std::string quoted = "'";
      for (char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
      return {quoted + "'", text};
    }
    return {text, text};
  }

  template <class T>
  T as(const YAML::Node& n, const std::string& key, const char* what) const {
    if (!n.IsScalar()) fail(n, key, str("expected ", what, ", got ", describe_node(n)));
    try {
      return n.as<T>();
    } catch (const YAML::Exception&) {
      fail(n, key, str("expected ", what, ", got ", describe_node(n)));
    }
  }

  // Flattens nested mappings into dotted keys ("train: {max_epochs: 2}" -> "train.max_epochs"); `leaf`
  // receives each non-mapping value.
  template <class Leaf>
  void flatten(const YAML::Node& map, const std::string& prefix, const std::string& section, Leaf&& leaf) const {
    if (map.IsNull()) return;
    if (!map.IsMap()) fail(map, section, "expected a mapping of config keys, got " + describe_node(map));
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) fail(it->first, section, "keys must be plain names, got " + describe_node(it->first));
      const std::string key = prefix.empty() ? it->first.Scalar() : prefix + "." + it->first.Scalar();
      if (it->second.IsMap())
        flatten(it->second, key, section, leaf);
      else
        leaf(key, it->second, it->first);
    }
  }

  void check_keys(const YAML::Node& map, const std::vector<std::string>& valid, const std::string& section) const {
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string k = it->first.IsScalar() ? it->first.Scalar() : describe_node(it->first);
      bool known = false;
      for (const auto& v : valid) known = known || v == k;
      if (!known)
        fail(it->first, "", str("unknown key '", section.empty() ? k : section + "." + k, "' (valid keys",
                                section.empty() ? "" : " under '" + section + "'", ": ", join_names(valid), ")"));
    }
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

std::string resolve_base(const std::string& base, const std::string& spec_file) {
  if (fs::path(base).is_absolute() || fs::exists(base)) return base;
  const fs::path beside = fs::path(spec_file).parent_path() / base;
  if (fs::exists(beside)) return beside.string();
  return base;  // reported as missing by the caller
}

void parse_random(const SpecReader& r, const YAML::Node& node, SweepSpec& s) {
  if (!node.IsMap()) r.fail(node, "random", "expected a mapping with samples, seed, params, got " + describe_node(node));
  r.check_keys(node, kRandomKeys, "random");
  if (!node["samples"]) r.fail(node, "random", "'samples' is required (how many trials to draw)");
  s.random_samples = r.as<int64_t>(node["samples"], "random.samples", "a positive integer");
  if (s.random_samples < 1) r.fail(node["samples"], "random.samples", str("must be at least 1, got ", s.random_samples));
  if (node["seed"]) {
    const int64_t seed = r.as<int64_t>(node["seed"], "random.seed", "a non-negative integer");
    if (seed < 0) r.fail(node["seed"], "random.seed", str("must be non-negative, got ", seed));
    s.random_seed = static_cast<uint64_t>(seed);
  }
  const YAML::Node params = node["params"];
  if (!params || params.IsNull() || (params.IsMap() && params.size() == 0))
    r.fail(node, "random.params", "at least one parameter to sample is required");
  if (!params.IsMap()) r.fail(params, "random.params", "expected a mapping of config keys, got " + describe_node(params));
  for (auto it = params.begin(); it != params.end(); ++it) {
    RandomParam p;
    p.key = it->first.Scalar();
    const std::string where = "random.params." + p.key;
    const YAML::Node d = it->second;
    if (!d.IsMap() || d.size() != 1)
      r.fail(d, where, "expected one distribution: {choice: [...]}, {uniform: [lo, hi]} or {loguniform: [lo, hi]}, got " +
                           describe_node(d));
    const std::string name = d.begin()->first.Scalar();
    const YAML::Node args = d.begin()->second;
    if (name == "choice") {
      p.dist = Distribution::choice;
      if (!args.IsSequence() || args.size() == 0) r.fail(args, where, "choice needs a non-empty list of values");
      for (const auto& v : args) p.choices.push_back(r.scalar(v, where));
    } else if (name == "uniform" || name == "loguniform") {
      p.dist = name == "uniform" ? Distribution::uniform : Distribution::loguniform;
      if (!args.IsSequence() || args.size() != 2) r.fail(args, where, name + " needs [lo, hi], got " + describe_node(args));
      p.lo = r.as<double>(args[0], where, "a number");
      p.hi = r.as<double>(args[1], where, "a number");
      if (!(std::isfinite(p.lo) && std::isfinite(p.hi) && p.lo < p.hi))
        r.fail(args, where, str(name, " needs finite bounds with lo < hi, got [", p.lo, ", ", p.hi, "]"));
      if (p.dist == Distribution::loguniform && p.lo <= 0.0)
        r.fail(args, where, str("loguniform needs lo > 0, got ", p.lo));
    } else {
      r.fail(d.begin()->first, where, str("unknown distribution '", name, "' (valid: ", join_names(kDistributions), ")"));
    }
    s.random_params.push_back(std::move(p));
  }
}

void parse_launch(const SpecReader& r, const YAML::Node& node, SweepSpec& s) {
  if (node.IsNull()) return;
  if (node.IsScalar()) {
    std::istringstream words(node.Scalar());
    for (std::string w; words >> w;) s.launch.push_back(w);
  } else if (node.IsSequence()) {
    for (const auto& w : node) s.launch.push_back(r.as<std::string>(w, "launch", "a string"));
  } else {
    r.fail(node, "launch", "expected a command prefix such as 'mpirun -np 4', got " + describe_node(node));
  }
}

void check_unique_keys(const SpecReader& r, const YAML::Node& root, const SweepSpec& s) {
  std::set<std::string> fixed, varied;
  for (const auto& a : s.overrides) fixed.insert(a.key);
  auto vary = [&](const std::string& key, const char* where) {
    if (fixed.count(key)) r.fail(root[where], key, str("is both a fixed override and varied in '", where, "'"));
    if (!varied.insert(key).second) r.fail(root[where], key, "is varied twice (in grid and random, or repeated)");
  };
  for (const auto& g : s.grid) vary(g.key, "grid");
  for (const auto& p : s.random_params) vary(p.key, "random");
}

}  // namespace

const std::vector<std::string>& sweep_metrics() {
  static const std::vector<std::string> m = {"valid_ppl", "bleu", "tokens_per_s", "wall_s"};
  return m;
}

ParamValue number_value(double v) {
  char label[32];
  std::snprintf(label, sizeof label, "%.4g", v);
  return {value_to_yaml(ConfigValue(v)), label};
}

SweepSpec parse_sweep_spec(const std::string& text, const std::string& file) {
  const SpecReader r(file);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    LUONG_FAIL("sweep spec ", file, ":", e.mark.line + 1, ":", e.mark.column + 1, ": malformed YAML: ", e.msg);
  }
  if (!root.IsMap()) r.fail(root, "", "expected a mapping with keys " + join_names(kTopKeys) + ", got " + describe_node(root));
  r.check_keys(root, kTopKeys, "");

  SweepSpec s;
  s.file = file;
  if (!root["base"]) r.fail(root, "base", "is required (the config file every trial starts from)");
  s.base = resolve_base(r.as<std::string>(root["base"], "base", "a config file path"), file);
  if (!std::filesystem::exists(s.base)) r.fail(root["base"], "base", str("config file '", s.base, "' does not exist"));

  if (root["overrides"])
    r.flatten(root["overrides"], "", "overrides", [&](const std::string& key, const YAML::Node& v, const YAML::Node&) {
      s.overrides.push_back({key, r.scalar(v, "overrides." + key)});
    });
  if (root["grid"]) {
    if (root["grid"].IsMap() && root["grid"].size() == 0) r.fail(root["grid"], "grid", "is empty");
    r.flatten(root["grid"], "", "grid", [&](const std::string& key, const YAML::Node& v, const YAML::Node& k) {
      if (!v.IsSequence()) r.fail(v, "grid." + key, "expected a list of values, got " + describe_node(v));
      if (v.size() == 0) r.fail(k, "grid." + key, "has no values (an empty list makes an empty grid)");
      GridAxis axis{key, {}};
      for (const auto& x : v) axis.values.push_back(r.scalar(x, "grid." + key));
      s.grid.push_back(std::move(axis));
    });
  }
  if (root["random"]) parse_random(r, root["random"], s);

  if (root["metric"]) {
    s.metric = r.as<std::string>(root["metric"], "metric", "a metric name");
    bool known = false;
    for (const auto& m : sweep_metrics()) known = known || m == s.metric;
    if (!known) r.fail(root["metric"], "metric", str("unknown metric '", s.metric, "' (valid: ", join_names(sweep_metrics()), ")"));
  }
  s.mode = (s.metric == "valid_ppl" || s.metric == "wall_s") ? "min" : "max";
  if (root["mode"]) {
    s.mode = r.as<std::string>(root["mode"], "mode", "min or max");
    if (s.mode != "min" && s.mode != "max") r.fail(root["mode"], "mode", str("expected min or max, got '", s.mode, "'"));
  }
  if (root["launch"]) parse_launch(r, root["launch"], s);
  if (root["parallel"]) {
    s.parallel = r.as<int64_t>(root["parallel"], "parallel", "a positive integer");
    if (s.parallel < 1) r.fail(root["parallel"], "parallel", str("must be at least 1, got ", s.parallel));
  }
  check_unique_keys(r, root, s);
  return s;
}

SweepSpec load_sweep_spec(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) LUONG_FAIL("sweep spec '", path, "' cannot be read: ", std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_sweep_spec(text.str(), path);
}

}  // namespace luong::sweep
