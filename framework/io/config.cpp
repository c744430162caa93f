#include "framework/io/config.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "framework/core/error.h"
#include "framework/io/read_file.h"

namespace luong {
namespace {

// "file:line: " for a node that came from a parsed document (yaml-cpp lines are 0-based).
std::string where_of(const std::string& source, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.line < 0) return source + ": ";
  return str(source, ":", m.line + 1, ": ");
}

std::string join_path(const std::string& section, const std::string& key) {
  return section.empty() ? key : section + "." + key;
}

YAML::Node parse_yaml(const std::string& text, const std::string& source) {
  // yaml-cpp would report a binary file as an escape-sequence error somewhere inside it.
  if (const int line = nul_byte_line(text))
    LUONG_FAIL("config ", source, " is not a text file (NUL byte at line ", line, "); expected a YAML mapping of keys");
  try {
    YAML::Node root = YAML::Load(text);
    // Load reads the first document only: the keys after a `---` would be dropped without a word.
    if (const int line = second_document_line(text))
      LUONG_FAIL("config ", source, ":", line, ": more than one YAML document (---); a config is one mapping");
    return root;
  } catch (const YAML::Exception& e) {
    LUONG_FAIL("config ", source, ":", e.mark.line + 1, ":", e.mark.column + 1, ": malformed YAML: ",
               printable(e.msg));
  }
}

}  // namespace

Config::Config(ConfigSchema schema) : schema_(std::move(schema)) {
  for (const auto& k : schema_.keys()) values_[k.path] = k.default_value;
}

Config Config::load_file(ConfigSchema schema, const std::string& path) {
  // An ifstream opens a directory without complaint and reads nothing: that would silently give the defaults.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    LUONG_FAIL("config file '", path, "' is a directory, expected a YAML file");
  const std::string text = read_whole_file(path, "config file", kMaxYamlFileBytes);
  // Checked here and in --set, not in load_string: a checkpoint's stored config came through both, and one
  // written before this check stays readable. A binary file (NUL bytes) is reported as such by merge_text.
  if (const Utf8Fault bad = first_invalid_utf8(text); bad.line && !nul_byte_line(text))
    LUONG_FAIL("config ", path, ":", bad.line, ":", bad.column, ": ", invalid_utf8_text(bad.byte),
               "; a config is UTF-8 text");
  Config c(std::move(schema));
  c.merge_text(text, path);
  return c;
}

Config Config::load_string(ConfigSchema schema, const std::string& text, const std::string& source) {
  Config c(std::move(schema));
  c.merge_text(text, source);
  return c;
}

void Config::merge_text(const std::string& text, const std::string& source) {
  const YAML::Node root = parse_yaml(text, source);
  if (root.IsNull()) return;  // an empty file sets nothing
  if (!root.IsMap())
    LUONG_FAIL("config ", where_of(source, root), "expected a mapping of keys at the top level, got ",
               describe_node(root), " (valid top-level keys: ", join_names(schema_.children("")), ")");
  std::set<std::string> seen;
  merge_node(root, "", source, seen);
}

void Config::merge_node(const YAML::Node& node, const std::string& section, const std::string& source,
                        std::set<std::string>& seen) {
  std::set<std::string> names;  // this mapping's own keys: `model:` twice is a duplicate even if disjoint
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar())
      LUONG_FAIL("config ", where_of(source, it->first), "keys must be plain names, got ", describe_node(it->first));
    const std::string name = it->first.as<std::string>();
    const std::string path = join_path(section, name);
    const std::string where = "config " + where_of(source, it->first);
    // yaml-cpp keeps repeated keys and the last would silently win; a key set twice is almost always a slip.
    // `seen` also catches one key spelled two ways (`model.layers: 1` and `model: {layers: 2}`).
    if (!names.insert(name).second) LUONG_FAIL(where, "duplicate key '", printable(path), "'");
    if (const KeySpec* spec = schema_.find(path)) {
      if (!seen.insert(path).second) LUONG_FAIL(where, "duplicate key '", path, "'");
      assign(*spec, it->second, where);
    } else if (schema_.is_section(path)) {
      if (it->second.IsNull()) continue;  // "model:" with nothing under it
      if (!it->second.IsMap())
        LUONG_FAIL(where, path, ": expected a mapping with keys ", join_names(schema_.children(path)), ", got ",
                   describe_node(it->second));
      // A tag on a section (`model: !foo {...}`) would be read past like the scalars' ones: refused too.
      if (const std::string tag = yaml_tag(it->second); !tag.empty() && tag != "!!map")
        LUONG_FAIL(where, path, ": tag ", printable_excerpt(tag), " on a section; luong reads no tags there");
      merge_node(it->second, path, source, seen);
    } else {
      LUONG_FAIL(where, printable(schema_.unknown_key_message(path)));
    }
  }
}

void Config::assign(const KeySpec& spec, const YAML::Node& value, const std::string& where) {
  auto v = scalar_to_value(value, spec.type);
  if (!v && spec.type == ValueType::integer && is_oversized_integer(value))
    LUONG_FAIL(where, spec.path, ": value ", printable_excerpt(value.Scalar()), " is out of range ",
               allowed_range(spec));
  if (!v && spec.type == ValueType::number) {
    const std::string problem = float_range_problem(value);
    if (!problem.empty()) LUONG_FAIL(where, spec.path, ": value ", printable_excerpt(value.Scalar()), " ", problem);
  }
  if (!v) LUONG_FAIL(where, spec.path, ": expected ", value_type_name(spec.type), ", got ", describe_node(value));
  // YAML's "\0" escape: a path would be cut there when opened, and the run would fail only when its config
  // is written into the first checkpoint.
  if (const auto* text = std::get_if<std::string>(&*v); text && text->find('\0') != std::string::npos)
    LUONG_FAIL(where, spec.path, ": the value ", describe_node(value),
               " contains a NUL byte, which no path or name can hold");
  schema_.validate(spec, *v, where);
  values_[spec.path] = std::move(*v);
  set_.insert(spec.path);
}

void Config::set(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    LUONG_FAIL("--set '", printable_excerpt(assignment), "': expected key=value (e.g. model.layers=4)");
  set(assignment.substr(0, eq), assignment.substr(eq + 1));
}

void Config::set(const std::string& path, const std::string& yaml_value) {
  // Shortened: the message may quote the value again, and a 100 kB value would fill the terminal.
  const std::string where = "--set " + printable_excerpt(path) + "=" + printable_excerpt(yaml_value) + ": ";
  if (const Utf8Fault bad = first_invalid_utf8(yaml_value); bad.line)
    LUONG_FAIL(where, invalid_utf8_text(bad.byte), " at byte ", bad.column, " of the value; a config is UTF-8 text");
  const KeySpec* spec = schema_.find(path);
  if (!spec) {
    if (schema_.is_section(path))
      LUONG_FAIL(where, "'", path, "' is a section; set one of its keys: ", join_names(schema_.children(path)));
    LUONG_FAIL(where, schema_.unknown_key_message(path));
  }
  // YAML reads "#..." as a comment, i.e. no value at all: `--set data.valid_src=#dev.src` silently became
  // an empty path (no validation). Said, with the quoting that keeps the '#'.
  if (const size_t first = yaml_value.find_first_not_of(" \t"); first != std::string::npos && yaml_value[first] == '#')
    LUONG_FAIL(where, "a value starting with '#' is a YAML comment (it would be empty); quote it: ", path, "='",
               printable_excerpt(yaml_value.substr(first)), "'");
  YAML::Node node;
  try {
    node = YAML::Load(yaml_value);
  } catch (const YAML::Exception& e) {
    LUONG_FAIL(where, "malformed YAML value: ", printable(e.msg));
  }
  assign(*spec, node, where);
}

const ConfigValue& Config::get(const std::string& path) const {
  auto it = values_.find(path);
  if (it == values_.end()) LUONG_FAIL("config: ", schema_.unknown_key_message(path));
  return it->second;
}

const ConfigValue& Config::typed(const std::string& path, ValueType t) const {
  const ConfigValue& v = get(path);
  LUONG_CHECK(value_type_of(v) == t, "config: key '", path, "' is a ", value_type_name(value_type_of(v)),
              ", read as ", value_type_name(t));
  return v;
}

int64_t Config::get_int(const std::string& path) const { return std::get<int64_t>(typed(path, ValueType::integer)); }
double Config::get_number(const std::string& path) const { return std::get<double>(typed(path, ValueType::number)); }
bool Config::get_bool(const std::string& path) const { return std::get<bool>(typed(path, ValueType::boolean)); }
const std::string& Config::get_string(const std::string& path) const {
  return std::get<std::string>(typed(path, ValueType::string));
}

std::string Config::dump() const {
  // Written by hand rather than with YAML::Emitter so numbers keep their shortest round-trip form and
  // strings that look like numbers stay quoted (value_to_yaml decides both).
  std::ostringstream os;
  auto emit = [&](auto&& self, const std::string& section, int depth) -> void {
    for (const auto& name : schema_.children(section)) {
      const std::string path = join_path(section, name);
      os << std::string(static_cast<size_t>(depth) * 2, ' ') << name << ":";
      if (schema_.is_section(path)) {
        os << "\n";
        self(self, path, depth + 1);
      } else {
        os << " " << value_to_yaml(values_.at(path)) << "\n";
      }
    }
  };
  emit(emit, "", 0);
  return os.str();
}

}  // namespace luong
