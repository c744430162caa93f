// ConfigSchema: every key a config may hold, with its type, default, documentation and checks. Keys are
// dotted paths ("model.layers"); the parts before the last dot are sections. The schema is the single
// source of the documentation (`luong config --doc` renders it as configs/README.md).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "framework/io/config_value.h"

namespace luong {

struct KeySpec {
  std::string path;            // "model.layers"
  ValueType type = ValueType::string;
  ConfigValue default_value;   // must have `type` (an integer default for a number key is converted)
  std::string doc;             // one or two sentences; shown in the reference and by `luong config --doc`
  std::vector<std::string> choices;   // string keys: the allowed values (empty = any string)
  std::optional<double> min;          // numeric keys: bounds, inclusive unless min_exclusive
  std::optional<double> max;
  bool min_exclusive = false;         // the value must be > min (a rate of 0 would never train)
  bool finite = false;                // number keys: .inf and .nan are refused
  // Names known only at run time (a registry): when set, the value must be one of them. Evaluated lazily so a
  // schema can be built before the registries are populated.
  std::function<std::vector<std::string>()> registered;
  // Any other rule: returns an error message ("" = fine).
  std::function<std::string(const ConfigValue&)> check;
};

class ConfigSchema {
 public:
  // Adds a key; its parent sections come into being implicitly. A path may not be both a key and a section.
  KeySpec& add(KeySpec spec);
  KeySpec& add_int(const std::string& path, int64_t def, std::string doc);
  KeySpec& add_number(const std::string& path, double def, std::string doc);
  KeySpec& add_bool(const std::string& path, bool def, std::string doc);
  KeySpec& add_string(const std::string& path, std::string def, std::string doc);
  KeySpec& add_choice(const std::string& path, std::string def, std::vector<std::string> choices, std::string doc);

  const KeySpec* find(const std::string& path) const;
  KeySpec& at(const std::string& path);  // throws naming the path when absent (to install validators later)
  bool is_section(const std::string& path) const;  // "" (the root) is a section
  // Immediate children of a section, in the order they were added ("layers", "hidden_size", ...).
  std::vector<std::string> children(const std::string& section) const;
  const std::vector<KeySpec>& keys() const { return keys_; }

  // Throws luong::Error "<where>path: ..." when `value` breaks the key's rules (type, choices, bounds, check).
  void validate(const KeySpec& spec, const ConfigValue& value, const std::string& where) const;
  // "unknown key 'a.b' (valid keys under 'a': x, y)"; the message used everywhere a key is not in the schema.
  std::string unknown_key_message(const std::string& path) const;

  // Markdown reference: one table per top-level section with key, type, default, allowed values, doc.
  std::string reference_markdown(const std::string& title, const std::string& intro) const;

 private:
  std::vector<KeySpec> keys_;
  std::map<std::string, size_t> index_;                       // path -> position in keys_
  std::map<std::string, std::vector<std::string>> sections_;  // section -> children in order
};

// The values a numeric key allows, as an interval: "[1, 9223372036854775807]" (integers), "(0, inf)" (numbers).
std::string allowed_range(const KeySpec& spec);

// Joins names as "a, b, c" (or with another separator: "a; b; c" for items that hold commas).
std::string join_names(const std::vector<std::string>& names, const std::string& separator = ", ");

}  // namespace luong
