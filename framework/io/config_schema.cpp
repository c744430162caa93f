#include "framework/io/config_schema.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

#include "framework/core/error.h"
#include "framework/core/suggest.h"

namespace luong {
namespace {

std::string parent_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

std::string leaf_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

std::string format_bound(double b) {
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), b);
  return std::string(buf, ptr);
}

// An integer key's bound as an integer: "9223372036854775807", not "9.223372036854776e+18".
std::string format_int_bound(double b) {
  if (b >= 0x1p63) return std::to_string(std::numeric_limits<int64_t>::max());
  if (b <= -0x1p63) return std::to_string(std::numeric_limits<int64_t>::min());
  return std::to_string(static_cast<int64_t>(b));
}

// Markdown table cells may not contain '|' or newlines.
std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

}  // namespace

std::string allowed_range(const KeySpec& spec) {
  const bool integer = spec.type == ValueType::integer;
  const auto fmt = [&](double b) { return integer ? format_int_bound(b) : format_bound(b); };
  std::string lower, upper;
  if (spec.min) lower = (spec.min_exclusive ? "(" : "[") + fmt(*spec.min);
  else lower = integer ? "[" + format_int_bound(-0x1p63) : "(-inf";
  if (spec.max) upper = fmt(*spec.max) + "]";
  else upper = integer ? format_int_bound(0x1p63) + "]" : "inf)";
  return lower + ", " + upper;
}

std::string join_names(const std::vector<std::string>& names, const std::string& separator) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : separator) + n;
  return out;
}

KeySpec& ConfigSchema::add(KeySpec spec) {
  LUONG_CHECK(!spec.path.empty() && spec.path.front() != '.' && spec.path.back() != '.',
              "config schema: bad key path '", spec.path, "'");
  LUONG_CHECK(!index_.count(spec.path) && !sections_.count(spec.path), "config schema: key '", spec.path,
              "' added twice or clashes with a section");
  if (spec.type == ValueType::number && std::holds_alternative<int64_t>(spec.default_value))
    spec.default_value = static_cast<double>(std::get<int64_t>(spec.default_value));
  LUONG_CHECK(value_type_of(spec.default_value) == spec.type, "config schema: default of '", spec.path,
              "' is a ", value_type_name(value_type_of(spec.default_value)), ", key is a ", value_type_name(spec.type));
  // Check the key's own default rules and every ancestor before changing anything, so a rejected key leaves
  // the schema as it was.
  if (!spec.registered) validate(spec, spec.default_value, "config schema default: ");
  for (std::string sec = parent_of(spec.path); !sec.empty(); sec = parent_of(sec))
    LUONG_CHECK(!index_.count(sec), "config schema: '", sec, "' is a key and cannot hold '", spec.path, "'");
  // Register the chain of sections above the key.
  std::string child = spec.path;
  for (std::string sec = parent_of(child);; sec = parent_of(sec)) {
    auto& kids = sections_[sec];
    const std::string leaf = leaf_of(child);
    const bool existed = std::find(kids.begin(), kids.end(), leaf) != kids.end();
    if (!existed) kids.push_back(leaf);
    if (sec.empty() || existed) break;
    child = sec;
  }
  index_[spec.path] = keys_.size();
  keys_.push_back(std::move(spec));
  return keys_.back();
}

namespace {
KeySpec make_spec(const std::string& path, ValueType type, ConfigValue def, std::string doc) {
  KeySpec k;
  k.path = path;
  k.type = type;
  k.default_value = std::move(def);
  k.doc = std::move(doc);
  return k;
}
}  // namespace

KeySpec& ConfigSchema::add_int(const std::string& path, int64_t def, std::string doc) {
  return add(make_spec(path, ValueType::integer, def, std::move(doc)));
}
KeySpec& ConfigSchema::add_number(const std::string& path, double def, std::string doc) {
  return add(make_spec(path, ValueType::number, def, std::move(doc)));
}
KeySpec& ConfigSchema::add_bool(const std::string& path, bool def, std::string doc) {
  return add(make_spec(path, ValueType::boolean, def, std::move(doc)));
}
KeySpec& ConfigSchema::add_string(const std::string& path, std::string def, std::string doc) {
  return add(make_spec(path, ValueType::string, std::move(def), std::move(doc)));
}
KeySpec& ConfigSchema::add_choice(const std::string& path, std::string def, std::vector<std::string> choices,
                                  std::string doc) {
  KeySpec k = make_spec(path, ValueType::string, std::move(def), std::move(doc));
  k.choices = std::move(choices);
  return add(std::move(k));
}

const KeySpec* ConfigSchema::find(const std::string& path) const {
  auto it = index_.find(path);
  return it == index_.end() ? nullptr : &keys_[it->second];
}

KeySpec& ConfigSchema::at(const std::string& path) {
  auto it = index_.find(path);
  if (it == index_.end()) LUONG_FAIL("config schema: ", unknown_key_message(path));
  return keys_[it->second];
}

bool ConfigSchema::is_section(const std::string& path) const { return sections_.count(path) > 0; }

std::vector<std::string> ConfigSchema::children(const std::string& section) const {
  auto it = sections_.find(section);
  return it == sections_.end() ? std::vector<std::string>{} : it->second;
}

std::string ConfigSchema::unknown_key_message(const std::string& path) const {
  // Report the valid keys at the deepest level of `path` that exists as a section.
  std::string sec = parent_of(path);
  while (!sec.empty() && !is_section(sec)) sec = parent_of(sec);
  const std::string where = sec.empty() ? "valid top-level keys" : "valid keys under '" + sec + "'";
  // The typo is in the first name below that section: "trian.lr" is a misspelt section, "train.max_step" a key.
  const std::string rest = sec.empty() ? path : path.substr(sec.size() + 1);
  const std::string typed = rest.substr(0, rest.find('.'));
  return str("unknown key '", path, "'", did_you_mean(typed, children(sec)), " (", where, ": ",
             join_names(children(sec)), ")");
}

void ConfigSchema::validate(const KeySpec& spec, const ConfigValue& value, const std::string& where) const {
  LUONG_CHECK(value_type_of(value) == spec.type, where, spec.path, ": internal type mismatch");
  if (spec.type == ValueType::integer || spec.type == ValueType::number) {
    const double v = spec.type == ValueType::integer ? static_cast<double>(std::get<int64_t>(value))
                                                     : std::get<double>(value);
    if (spec.finite && !std::isfinite(v))
      LUONG_FAIL(where, spec.path, ": value ", value_to_yaml(value), " is not allowed: expected a finite number in ",
                 allowed_range(spec));
    const bool below = spec.min && (spec.min_exclusive ? !(v > *spec.min) : !(v >= *spec.min));
    if (below || (spec.max && !(v <= *spec.max)))
      LUONG_FAIL(where, spec.path, ": value ", value_to_yaml(value), " is out of range ", allowed_range(spec));
  }
  if (spec.type == ValueType::string) {
    const std::string& s = std::get<std::string>(value);
    std::vector<std::string> allowed = spec.choices;
    if (spec.registered) allowed = spec.registered();
    if ((!spec.choices.empty() || spec.registered) && std::find(allowed.begin(), allowed.end(), s) == allowed.end())
      LUONG_FAIL(where, spec.path, ": '", printable_excerpt(s), "' is not one of: ", join_names(allowed),
                 did_you_mean(s, allowed));
  }
  if (spec.check) {
    const std::string err = spec.check(value);
    if (!err.empty()) LUONG_FAIL(where, spec.path, ": ", err);
  }
}

std::string ConfigSchema::reference_markdown(const std::string& title, const std::string& intro) const {
  std::ostringstream os;
  os << "# " << title << "\n\n" << intro << "\n";
  // Top-level keys that are not sections first, then one table per section, in schema order.
  std::vector<std::string> top_keys, sections;
  for (const auto& name : children("")) (is_section(name) ? sections : top_keys).push_back(name);
  auto table = [&](const std::string& heading, const std::string& prefix) {
    os << "\n## " << heading << "\n\n| key | type | default | allowed | description |\n|---|---|---|---|---|\n";
    for (const auto& k : keys_) {
      const bool in_section = prefix.empty() ? parent_of(k.path).empty() : k.path.rfind(prefix + ".", 0) == 0;
      if (!in_section) continue;
      std::string allowed;
      if (!k.choices.empty()) allowed = join_names(k.choices);
      else if (k.registered) allowed = "a registered name";
      // Integer bounds in full: "100000", not "1e+05".
      const auto fmt = [&](double b) { return k.type == ValueType::integer ? format_int_bound(b) : format_bound(b); };
      if (k.min || k.max)
        allowed += (allowed.empty() ? "" : "; ") +
                   std::string(k.min ? fmt(*k.min) + (k.min_exclusive ? " < " : " ≤ ") : "") + "x" +
                   (k.max ? " ≤ " + fmt(*k.max) : "");
      os << "| `" << k.path << "` | " << value_type_name(k.type) << " | `" << cell(value_to_yaml(k.default_value))
         << "` | " << cell(allowed) << " | " << cell(k.doc) << " |\n";
    }
  };
  if (!top_keys.empty()) table("top level", "");
  for (const auto& s : sections) table(s, s);
  return os.str();
}

}  // namespace luong
