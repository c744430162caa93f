// Typed config values and their YAML scalar form. A config key holds exactly one of four types; this file is
// the one place that decides which YAML scalars count as which type, and how a value is written back so that
// reading the dump gives the same typed value again.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace YAML {
class Node;
}

namespace luong {

enum class ValueType { integer, number, boolean, string };

// number = double; an integer scalar is accepted where a number is expected (`lr: 1` is 1.0).
using ConfigValue = std::variant<int64_t, double, bool, std::string>;

const char* value_type_name(ValueType t);
ValueType value_type_of(const ConfigValue& v);

// Parses a YAML scalar node as `type`; nullopt when it is not of that type. Rules:
//   integer: optional sign and decimal digits (`12`, `-3`); a quoted scalar is a string, never an integer;
//   number:  an integer or a decimal/exponent literal (`0.5`, `1e-3`, `.inf`), unquoted;
//   boolean: true/false/yes/no/on/off in any case, unquoted;
//   string:  any scalar (quoted or plain); a null scalar (`~` or nothing) is the empty string.
// A scalar tagged `!!str` counts as quoted: YAML says it is a string whatever it looks like.
std::optional<ConfigValue> scalar_to_value(const YAML::Node& node, ValueType type);

// True when YAML makes the scalar a string whatever its text: quoted (`"3"`, `'3'`) or tagged `!!str`.
bool is_explicit_string(const YAML::Node& node);

// The YAML text of a value that reads back as the same type and value: doubles use the shortest
// round-trip form and always carry a '.' or exponent; strings that would read as another type are quoted.
std::string value_to_yaml(const ConfigValue& v);

// Short description of a node for error messages: the scalar text in quotes, "a mapping", "a sequence", "null".
std::string describe_node(const YAML::Node& node);

// A node's explicit YAML tag as written: "" for none (plain, or quoted: quoting is not a type), "!!int",
// "!!float", "!!str", "!!map", ... for YAML's core tags, and the tag itself ("!foo") for an application tag,
// which luong never reads. The one place configs and sweep specs classify tags.
std::string yaml_tag(const YAML::Node& node);

// True when the node is a plain integer literal (`18446744073709551615`) that does not fit in int64, so the
// error can say "out of range" rather than "expected integer".
bool is_oversized_integer(const YAML::Node& node);

// For a plain decimal/exponent literal whose value a double cannot hold: "underflows to 0 (...)" for
// `1e-400`, "overflows (...)" for `1e400`, so the error can say why rather than "expected number";
// "" for any other node.
std::string float_range_problem(const YAML::Node& node);

// 1-based line where a second YAML document starts (its `---`, or its first token after a `...`), 0 when
// the text holds at most one. yaml-cpp's Load reads only the first document and would silently drop the
// rest. Throws YAML::Exception when any document is malformed.
int second_document_line(const std::string& text);

// The largest config or sweep spec luong reads (16 MiB; the real ones are a few kB).
constexpr size_t kMaxYamlFileBytes = size_t{16} << 20;

// 1-based line of the first NUL byte, 0 when there is none: a file with NUL bytes is binary, not YAML.
int nul_byte_line(const std::string& text);

// Where `text` stops being UTF-8: the 1-based line and byte column of the first invalid byte, and that byte;
// line 0 when all of it is UTF-8. YAML text is Unicode, and a config's strings reach JSON records and the
// sweep's comparisons of settings, which need them as UTF-8 (a Latin-1 path is refused at load, not after a
// run).
struct Utf8Fault {
  int line = 0;
  int column = 0;
  unsigned char byte = 0;
};
Utf8Fault first_invalid_utf8(const std::string& text);
// "invalid UTF-8 (byte 0xE9)": the message part shared by every check above.
std::string invalid_utf8_text(unsigned char byte);

// `s` for an error message: bytes that are control characters or not part of valid UTF-8 are written as
// \xHH, so quoting a binary file cannot put raw bytes on the terminal.
std::string printable(const std::string& s);
// printable(s) cut to about `max_bytes` (at a UTF-8 character boundary) with "... (N bytes)" appended when
// longer, so an error about a 100 kB value does not flood the terminal.
std::string printable_excerpt(const std::string& s, size_t max_bytes = 100);

}  // namespace luong
