// Config: the resolved values of every schema key. Built from the schema defaults, then a YAML file, then
// `--set path=value` overrides, each layer checked against the schema (unknown keys, duplicate keys, types,
// ranges). Errors name the source (file and line, or the --set argument), the key path and, for unknown keys,
// the valid keys.
#pragma once
#include <map>
#include <set>
#include <string>

#include "framework/io/config_schema.h"

namespace YAML {
class Node;
}

namespace luong {

class Config {
 public:
  // All keys at their defaults.
  explicit Config(ConfigSchema schema);

  // Defaults, then the YAML file at `path` (error if it cannot be read or parsed, naming file and line).
  static Config load_file(ConfigSchema schema, const std::string& path);
  // Defaults, then YAML text; `source` names it in error messages.
  static Config load_string(ConfigSchema schema, const std::string& text, const std::string& source = "<string>");

  // Applies one YAML document (a mapping, or empty) on top of the current values.
  void merge_text(const std::string& text, const std::string& source);
  // Applies "a.b=value": value is parsed as a YAML scalar, then type-checked against the key.
  void set(const std::string& assignment);
  void set(const std::string& path, const std::string& yaml_value);

  const ConfigValue& get(const std::string& path) const;  // throws the unknown-key message
  int64_t get_int(const std::string& path) const;
  double get_number(const std::string& path) const;
  bool get_bool(const std::string& path) const;
  const std::string& get_string(const std::string& path) const;
  // True when the file or an override gave the key (rather than its default).
  bool is_set(const std::string& path) const { return set_.count(path) > 0; }

  // Every key with its value, nested by section, in schema order; loading it gives back the same config.
  std::string dump() const;
  const ConfigSchema& schema() const { return schema_; }

 private:
  // `seen`: the key paths this document has set so far (a key given twice is an error).
  void merge_node(const YAML::Node& node, const std::string& section, const std::string& source,
                  std::set<std::string>& seen);
  void assign(const KeySpec& spec, const YAML::Node& value, const std::string& where);
  const ConfigValue& typed(const std::string& path, ValueType t) const;

  ConfigSchema schema_;
  std::map<std::string, ConfigValue> values_;
  std::set<std::string> set_;
};

}  // namespace luong
