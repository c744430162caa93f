#include "framework/sweep/sweep_spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "framework/core/error.h"
#include "framework/core/suggest.h"
#include "framework/io/config_schema.h"
#include "framework/io/config_value.h"
#include "framework/io/read_file.h"
#include "framework/sweep/gpu_pool.h"

namespace luong::sweep {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kTopKeys = {"base", "overrides", "grid",     "random", "metric",
                                           "mode", "launch",    "parallel", "prune",  "gpus"};
const std::vector<std::string> kPruneKeys = {"rule",      "metric",   "min_trials", "min_validations",
                                             "min_steps", "reduction"};
const std::vector<std::string> kValidationMetrics = {"valid_ppl", "valid_bleu", "valid_chrf"};
const std::vector<std::string> kRandomKeys = {"samples", "seed", "params", "sampler", "startup"};
const std::vector<std::string> kSamplers = {"random", "tpe"};
const std::vector<std::string> kDistributions = {"choice", "uniform", "loguniform"};

// Builds errors of the form "sweep spec FILE:LINE: KEY: message".
class SpecReader {
 public:
  explicit SpecReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& msg) const {
    fail_at(line_of(at), key, msg);
  }
  [[noreturn]] void fail_at(int line, const std::string& key, const std::string& msg) const {
    const std::string where = line > 0 ? str(file_, ":", line) : file_;
    LUONG_FAIL("sweep spec ", where, ": ", key.empty() ? "" : key + ": ", msg);
  }
  // 1-based line of a node, 0 when unknown (yaml-cpp lines are 0-based, -1 for nodes not from the text).
  static int line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

  ParamValue scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar() && !n.IsNull()) fail(n, key, "expected a single value, got " + describe_node(n));
    if (n.IsNull()) return {"", ""};
    const std::string text = n.Scalar();
    // A core tag is passed on (`--set model.layers=!!float 3`), so that the config refuses it as it would in a
    // config file; dropped, `!!float 3` became the integer 3.
    if (const std::string tag = yaml_tag(n); !tag.empty() && tag != "!!str") return {tag + " " + text, text};
    // A quoted or !!str-tagged scalar stays a string when re-read by `--set` (e.g. '"yes"' must not become a
    // boolean).
    if (is_explicit_string(n)) {
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
  // A dotted key given twice (`optim.lr` and `optim: {lr: ...}`, or repeated) is an error: yaml-cpp would
  // keep both and the last would silently win.
  template <class Leaf>
  void flatten(const YAML::Node& map, const std::string& section, Leaf&& leaf) const {
    std::set<std::string> seen;
    flatten(map, "", section, seen, leaf);
  }
  template <class Leaf>
  void flatten(const YAML::Node& map, const std::string& prefix, const std::string& section,
               std::set<std::string>& seen, Leaf&& leaf) const {
    if (map.IsNull()) return;
    if (!map.IsMap()) fail(map, section, "expected a mapping of config keys, got " + describe_node(map));
    std::set<std::string> names;
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) fail(it->first, section, "keys must be plain names, got " + describe_node(it->first));
      const std::string key = prefix.empty() ? it->first.Scalar() : prefix + "." + it->first.Scalar();
      const bool repeated = !names.insert(it->first.Scalar()).second;
      if (repeated || (!it->second.IsMap() && !seen.insert(key).second))
        fail(it->first, section, "duplicate key '" + printable(key) + "'");
      if (it->second.IsMap())
        flatten(it->second, key, section, seen, leaf);
      else
        leaf(key, it->second, it->first);
    }
  }

  void check_keys(const YAML::Node& map, const std::vector<std::string>& valid, const std::string& section) const {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string k = it->first.IsScalar() ? it->first.Scalar() : describe_node(it->first);
      const std::string path = section.empty() ? k : section + "." + k;
      bool known = false;
      for (const auto& v : valid) known = known || v == k;
      if (!known)
        fail(it->first, "",
             str("unknown key '", printable(path), "'", did_you_mean(k, valid), " (valid keys",
                 section.empty() ? "" : " under '" + section + "'", ": ", join_names(valid), ")"));
      if (!seen.insert(k).second) fail(it->first, "", str("duplicate key '", path, "'"));
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
  if (node["sampler"]) {
    s.sampler = r.as<std::string>(node["sampler"], "random.sampler", "random or tpe");
    if (s.sampler != "random" && s.sampler != "tpe")
      r.fail(node["sampler"], "random.sampler",
             str("unknown sampler '", s.sampler, "' (valid: ", join_names(kSamplers), ")"));
  }
  if (s.tpe()) {
    // Optuna's default is 10 random trials first; a small sweep keeps at least a third of its trials for TPE.
    s.tpe_startup = std::clamp<int64_t>((s.random_samples * 2 + 2) / 3, 1, kDefaultTpeStartup);
    if (node["startup"]) {
      s.tpe_startup = r.as<int64_t>(node["startup"], "random.startup", "a positive integer");
      if (s.tpe_startup < 1) r.fail(node["startup"], "random.startup", str("must be at least 1, got ", s.tpe_startup));
      if (s.tpe_startup >= s.random_samples)
        r.fail(node["startup"], "random.startup",
               str("must be less than random.samples (", s.random_samples, "), or no trial is drawn by TPE; got ",
                   s.tpe_startup));
    }
  } else if (node["startup"]) {
    r.fail(node["startup"], "random.startup", "is a setting of sampler: tpe (the trials drawn at random before TPE)");
  }
  const YAML::Node params = node["params"];
  if (!params || params.IsNull() || (params.IsMap() && params.size() == 0))
    r.fail(node, "random.params", "at least one parameter to sample is required");
  if (!params.IsMap()) r.fail(params, "random.params", "expected a mapping of config keys, got " + describe_node(params));
  for (auto it = params.begin(); it != params.end(); ++it) {
    RandomParam p;
    p.key = it->first.Scalar();
    s.lines["random.params." + p.key] = SpecReader::line_of(it->first);
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

// `prune: {rule, metric, min_trials, min_validations, min_steps, reduction}` (or `prune: true` for the median rule's
// defaults, `false` for none). Parsed after `metric` and `mode`: the rule compares by the sweep's own metric when
// that is a validation one.
void parse_prune(const SpecReader& r, const YAML::Node& node, SweepSpec& s) {
  PruneRule& p = s.prune;
  if (const auto on = node.IsScalar() ? scalar_to_value(node, ValueType::boolean) : std::nullopt) {
    p.enabled = std::get<bool>(*on);
  } else if (node.IsMap()) {
    r.check_keys(node, kPruneKeys, "prune");
    p.enabled = true;
  } else {
    r.fail(node, "prune",
           "expected a mapping with " + join_names(kPruneKeys) + " ({} or true for the defaults), got " +
               describe_node(node));
  }
  const bool by_sweep_metric =
      std::find(kValidationMetrics.begin(), kValidationMetrics.end(), s.metric) != kValidationMetrics.end();
  p.metric = by_sweep_metric ? s.metric : "valid_ppl";
  if (node.IsMap() && node["metric"]) {
    p.metric = r.as<std::string>(node["metric"], "prune.metric", "a validation metric");
    if (std::find(kValidationMetrics.begin(), kValidationMetrics.end(), p.metric) == kValidationMetrics.end())
      r.fail(node["metric"], "prune.metric",
             str("'", p.metric, "' is not measured while a trial trains; expected ", join_names(kValidationMetrics)));
  }
  p.mode = p.metric == s.metric ? s.mode : p.metric == "valid_ppl" ? "min" : "max";
  const auto at_least_one = [&](const char* key, int64_t& field, const char* what) {
    if (!node.IsMap() || !node[key]) return;
    field = r.as<int64_t>(node[key], str("prune.", key), what);
    if (field < 1) r.fail(node[key], str("prune.", key), str("must be at least 1, got ", field));
  };
  if (node.IsMap() && node["rule"]) {
    p.rule = r.as<std::string>(node["rule"], "prune.rule", "median or asha");
    if (p.rule != "median" && p.rule != "asha")
      r.fail(node["rule"], "prune.rule",
             str("'", p.rule, "' is not a pruning rule; expected median (the median stopping rule) or asha ",
                 "(successive halving)"));
  }
  // Each rule's own settings: one given to the other rule would be silently ignored.
  for (const char* key : p.rule == "asha" ? std::vector<const char*>{"min_trials", "min_validations"}
                                          : std::vector<const char*>{"min_steps", "reduction"})
    if (node.IsMap() && node[key])
      r.fail(node[key], str("prune.", key),
             str("is a setting of rule ", p.rule == "asha" ? "median" : "asha", ", and this prune: rule is ", p.rule));
  at_least_one("min_trials", p.min_trials, "a positive integer (finished trials to compare with)");
  at_least_one("min_validations", p.min_validations, "a positive integer (validations before a trial may stop)");
  if (p.rule != "asha") return;
  if (!node["min_steps"])
    r.fail(node, "prune.min_steps",
           "is required with rule asha: the steps every trial trains before the first comparison");
  at_least_one("min_steps", p.halving.min_steps, "a positive integer (the steps of the first rung)");
  if (node["reduction"]) {
    p.halving.reduction = r.as<int64_t>(node["reduction"], "prune.reduction", "an integer of at least 2");
    if (p.halving.reduction < 2)
      r.fail(node["reduction"], "prune.reduction",
             str("must be at least 2 (1/reduction of a rung's trials go on), got ", p.halving.reduction));
  }
}

// A grid value as the value it reads back as: numbers by number (0.1 and 0.10, 1 and 1.0 are "n:0.1" and "n:1.0"),
// booleans by truth (yes and true), anything else by its text. A quoted scalar is a string, as `--set` reads it:
// '0.1' is not the number 0.1, but 'dot' is the string dot.
std::string canonical(const YAML::Node& n) {
  if (n.IsNull()) return "~";
  if (auto v = scalar_to_value(n, ValueType::number)) return "n:" + value_to_yaml(*v);
  if (auto v = scalar_to_value(n, ValueType::boolean)) return "b:" + value_to_yaml(*v);
  return "s:" + n.Scalar();
}

// A grid axis; a value equal to an earlier one (as a value, not as text) is dropped, the first spelling kept,
// so `[0.1, 0.10]` is one trial, not two that train the same model.
GridAxis parse_axis(const SpecReader& r, const std::string& key, const YAML::Node& values) {
  GridAxis axis{key, {}};
  std::set<std::string> seen;
  for (const auto& x : values) {
    const ParamValue v = r.scalar(x, "grid." + key);
    if (seen.insert(canonical(x)).second) axis.values.push_back(v);
  }
  return axis;
}

// The key node of `name` in a mapping (its line is the key's; a block value starts on the next line).
YAML::Node key_node(const YAML::Node& map, const std::string& name) {
  for (auto it = map.begin(); it != map.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == name) return it->first;
  return map[name];
}

// Refuses a spec that makes more than kMaxTrials trials, from the sizes alone (nothing is expanded).
void check_trial_count(const SpecReader& r, const YAML::Node& root, const SweepSpec& s) {
  const int64_t n = trial_count(s);
  if (n <= kMaxTrials) return;
  std::string sizes;
  for (const auto& axis : s.grid) sizes += (sizes.empty() ? "" : " x ") + std::to_string(axis.values.size());
  std::string how = s.grid.empty() ? "" : "grid " + sizes;
  if (s.random_samples > 0) how += (how.empty() ? "" : " x ") + str("random.samples ", s.random_samples);
  const std::string count = std::to_string(n) + (n == std::numeric_limits<int64_t>::max() ? " or more" : "");
  const bool grid = !s.grid.empty();
  r.fail(grid ? key_node(root, "grid") : root["random"]["samples"], grid ? "grid" : "random.samples",
         str("the spec makes ", count, " trials (", how, "), more than the limit of ", kMaxTrials,
             "; use fewer values or samples, or split the sweep"));
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
  static const std::vector<std::string> m = {"valid_ppl", "valid_bleu",   "valid_chrf", "bleu",
                                             "chrf",      "tokens_per_s", "wall_s"};
  return m;
}

ParamValue number_value(double v) {
  char label[32];
  std::snprintf(label, sizeof label, "%.4g", v);
  return {value_to_yaml(ConfigValue(v)), label};
}

// Every value of a spec reaches a command line or a path: a NUL byte (YAML's \0 escape) would cut it there,
// and an application tag (`!foo 3`) is not something luong reads. Both are refused where they are.
void check_plain_text(const SpecReader& r, const YAML::Node& node, const std::string& key) {
  if (const std::string tag = yaml_tag(node); !tag.empty() && tag.rfind("!!", 0) != 0)
    r.fail(node, key, "tag " + printable_excerpt(tag) + ": luong reads no application tags");
  if (node.IsScalar() && node.Scalar().find('\0') != std::string::npos)
    r.fail(node, key, "the value " + describe_node(node) + " contains a NUL byte");
  if (node.IsSequence())
    for (const auto& item : node) check_plain_text(r, item, key);
  if (node.IsMap())
    for (const auto& kv : node) {
      const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
      check_plain_text(r, kv.first, key);
      check_plain_text(r, kv.second, key.empty() ? name : key + "." + name);
    }
}

SweepSpec parse_sweep_spec(const std::string& text, const std::string& file) {
  const SpecReader r(file);
  // yaml-cpp would report a binary file as an escape-sequence error somewhere inside it.
  if (const int line = nul_byte_line(text))
    LUONG_FAIL("sweep spec ", file, " is not a text file (NUL byte at line ", line, "); expected a YAML mapping");
  if (const Utf8Fault bad = first_invalid_utf8(text); bad.line)
    LUONG_FAIL("sweep spec ", file, ":", bad.line, ":", bad.column, ": ", invalid_utf8_text(bad.byte),
               "; a sweep spec is UTF-8 text");
  YAML::Node root;
  try {
    root = YAML::Load(text);
    // Load reads the first document only: the keys after a `---` would be dropped without a word.
    if (const int line = second_document_line(text))
      r.fail_at(line, "", "more than one YAML document (---); a sweep spec is one mapping");
  } catch (const YAML::Exception& e) {
    LUONG_FAIL("sweep spec ", file, ":", e.mark.line + 1, ":", e.mark.column + 1, ": malformed YAML: ",
               printable(e.msg));
  }
  check_plain_text(r, root, "");
  if (!root.IsMap()) r.fail(root, "", "expected a mapping with keys " + join_names(kTopKeys) + ", got " + describe_node(root));
  r.check_keys(root, kTopKeys, "");

  SweepSpec s;
  s.file = file;
  if (!root["base"]) r.fail(root, "base", "is required (the config file every trial starts from)");
  s.base = resolve_base(r.as<std::string>(root["base"], "base", "a config file path"), file);
  if (!std::filesystem::exists(s.base)) r.fail(root["base"], "base", str("config file '", s.base, "' does not exist"));
  if (std::filesystem::is_directory(s.base))
    r.fail(root["base"], "base", str("config file '", s.base, "' is a directory, expected a YAML file"));

  if (root["overrides"])
    r.flatten(root["overrides"], "overrides", [&](const std::string& key, const YAML::Node& v, const YAML::Node& k) {
      s.overrides.push_back({key, r.scalar(v, "overrides." + key)});
      s.lines["overrides." + key] = SpecReader::line_of(k);
    });
  if (root["grid"]) {
    // `grid:` with nothing after it is as empty as `grid: {}` (a forgotten indent, not a one-trial sweep).
    if ((root["grid"].IsMap() && root["grid"].size() == 0) || root["grid"].IsNull())
      r.fail(key_node(root, "grid"), "grid", "is empty");
    r.flatten(root["grid"], "grid", [&](const std::string& key, const YAML::Node& v, const YAML::Node& k) {
      if (!v.IsSequence()) r.fail(v, "grid." + key, "expected a list of values, got " + describe_node(v));
      if (v.size() == 0) r.fail(k, "grid." + key, "has no values (an empty list makes an empty grid)");
      s.grid.push_back(parse_axis(r, key, v));
      s.lines["grid." + key] = SpecReader::line_of(k);
    });
  }
  if (root["random"]) parse_random(r, root["random"], s);
  check_trial_count(r, root, s);

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
  if (root["prune"]) parse_prune(r, root["prune"], s);
  if (const YAML::Node g = root["gpus"]) {
    // `gpus: [0, 1]` or `gpus: "0,1"`, as --gpus takes them.
    if (!g.IsSequence() && !g.IsScalar())
      r.fail(g, "gpus", "expected a list of GPU ids such as [0, 1], got " + describe_node(g));
    if (g.IsSequence())
      for (const auto& id : g) s.gpus.push_back(r.as<std::string>(id, "gpus", "a GPU id"));
    try {
      if (g.IsSequence())
        check_gpu_ids(s.gpus, "gpus");
      else
        s.gpus = parse_gpu_list(g.Scalar(), "gpus");
    } catch (const Error& e) {
      r.fail(g, "", e.what());  // the message names the key
    }
  }
  check_unique_keys(r, root, s);
  // TPE draws each trial from the results of those before it: a grid would multiply every draw by its combinations.
  if (s.tpe() && !s.grid.empty())
    r.fail(root["random"]["sampler"], "random.sampler",
           "tpe cannot be combined with grid: (put the grid's keys in random.params as {choice: [...]})");
  return s;
}

int64_t trial_count(const SweepSpec& spec) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t n = std::max<int64_t>(1, spec.random_samples);
  for (const auto& axis : spec.grid) {
    const auto size = static_cast<int64_t>(axis.values.size());
    if (size > 0 && n > kMax / size) return kMax;
    n *= size;
  }
  return n;
}

void check_spec_keys(const SweepSpec& spec, const ConfigSchema& schema) {
  const SpecReader r(spec.file);
  auto line = [&](const std::string& where) {
    auto it = spec.lines.find(where);
    return it == spec.lines.end() ? 0 : it->second;
  };
  auto known = [&](const std::string& section, const std::string& key) -> const KeySpec& {
    const std::string where = section + "." + key;
    if (const KeySpec* k = schema.find(key)) return *k;
    if (schema.is_section(key))
      r.fail_at(line(where), where, "is a section; set one of its keys: " + join_names(schema.children(key)));
    r.fail_at(line(where), where, printable(schema.unknown_key_message(key)));
  };
  for (const auto& a : spec.overrides) {
    const KeySpec& k = known("overrides", a.key);
    const std::string where = "overrides." + a.key;
    YAML::Node node;  // the value as `luong train --set` will read it
    try {
      node = YAML::Load(a.value.yaml);
    } catch (const YAML::Exception& e) {
      r.fail_at(line(where), where, "malformed YAML value: " + printable(e.msg));
    }
    const auto v = scalar_to_value(node, k.type);
    if (!v && k.type == ValueType::integer && is_oversized_integer(node))
      r.fail_at(line(where), where,
                str("value ", printable_excerpt(a.value.yaml), " is out of range ", allowed_range(k)));
    if (!v && k.type == ValueType::number && !float_range_problem(node).empty())
      r.fail_at(line(where), where, str("value ", printable_excerpt(a.value.yaml), " ", float_range_problem(node)));
    if (!v) r.fail_at(line(where), where, str("expected ", value_type_name(k.type), ", got ", describe_node(node)));
    const int l = line(where);
    schema.validate(k, *v, str("sweep spec ", l > 0 ? str(spec.file, ":", l) : spec.file, ": overrides."));
  }
  for (const auto& g : spec.grid) known("grid", g.key);
  for (const auto& p : spec.random_params) known("random.params", p.key);
}

SweepSpec load_sweep_spec(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) LUONG_FAIL("sweep spec '", path, "' is a directory, expected a YAML file");
  return parse_sweep_spec(read_whole_file(path, "sweep spec", kMaxYamlFileBytes), path);
}

}  // namespace luong::sweep
