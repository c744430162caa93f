#include "framework/io/config_value.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <sstream>
#include <vector>

#include "framework/core/utf8.h"

namespace luong {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::optional<int64_t> parse_int(const std::string& s) {
  const char* b = s.data();
  const char* e = b + s.size();
  if (b != e && *b == '+') ++b;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || ptr != e || b == e) return std::nullopt;
  return v;
}

std::optional<double> parse_double(const std::string& s) {
  const std::string l = lower(s);
  if (l == ".inf" || l == "+.inf") return std::numeric_limits<double>::infinity();
  if (l == "-.inf") return -std::numeric_limits<double>::infinity();
  if (l == ".nan") return std::numeric_limits<double>::quiet_NaN();
  const char* b = s.data();
  const char* e = b + s.size();
  if (b != e && *b == '+') ++b;
  if (b == e || !(std::isdigit(static_cast<unsigned char>(*b)) || *b == '.' || *b == '-')) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(b, e, v, std::chars_format::general);
  if (ec != std::errc() || ptr != e) return std::nullopt;
  return v;
}

std::optional<bool> parse_bool(const std::string& s) {
  const std::string l = lower(s);
  if (l == "true" || l == "yes" || l == "on") return true;
  if (l == "false" || l == "no" || l == "off") return false;
  return std::nullopt;
}

// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF), or 0 when the byte there does not start one.
bool is_null_text(const std::string& s) { return s.empty() || s == "~" || lower(s) == "null"; }

constexpr const char* kCoreTagPrefix = "tag:yaml.org,2002:";  // `!!x` as yaml-cpp resolves it

// Records where each document starts and ignores everything else.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::integer: return "integer";
    case ValueType::number: return "number";
    case ValueType::boolean: return "boolean";
    case ValueType::string: return "string";
  }
  return "?";
}

ValueType value_type_of(const ConfigValue& v) {
  switch (v.index()) {
    case 0: return ValueType::integer;
    case 1: return ValueType::number;
    case 2: return ValueType::boolean;
    default: return ValueType::string;
  }
}

// Whether a scalar's tag allows `type`: none (plain "?" or quoted "!"), or the YAML core tag of that type
// (!!int and !!float for a number). `!!float 3` for an integer key or an application tag (`!foo 3`) would
// otherwise be read past without a word.
bool tag_fits(const YAML::Node& node, ValueType type) {
  const std::string tag = yaml_tag(node);
  switch (type) {
    case ValueType::string:
      return tag.empty() || tag == "!!str";
    case ValueType::integer:
      return tag.empty() || tag == "!!int";
    case ValueType::number:
      return tag.empty() || tag == "!!int" || tag == "!!float";
    case ValueType::boolean:
      return tag.empty() || tag == "!!bool";
  }
  return false;
}

std::optional<ConfigValue> scalar_to_value(const YAML::Node& node, ValueType type) {
  if (node.IsNull()) {
    if (type == ValueType::string) return ConfigValue{std::string()};
    return std::nullopt;
  }
  if (!node.IsScalar() || !tag_fits(node, type)) return std::nullopt;
  const std::string& s = node.Scalar();
  const bool quoted = is_explicit_string(node);
  switch (type) {
    case ValueType::string: return ConfigValue{s};
    case ValueType::integer:
      if (quoted) return std::nullopt;
      if (auto v = parse_int(s)) return ConfigValue{*v};
      return std::nullopt;
    case ValueType::number:
      if (quoted) return std::nullopt;
      if (auto v = parse_int(s)) return ConfigValue{static_cast<double>(*v)};
      if (auto v = parse_double(s)) return ConfigValue{*v};
      return std::nullopt;
    case ValueType::boolean:
      if (quoted) return std::nullopt;
      if (auto v = parse_bool(s)) return ConfigValue{*v};
      return std::nullopt;
  }
  return std::nullopt;
}

bool is_explicit_string(const YAML::Node& node) {
  // yaml-cpp tags quoted scalars "!" and plain ones "?": quoting forces a string, as YAML itself says.
  return node.IsScalar() && (node.Tag() == "!" || yaml_tag(node) == "!!str");
}

std::string value_to_yaml(const ConfigValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (auto* d = std::get_if<double>(&v)) {
    if (std::isnan(*d)) return ".nan";
    if (std::isinf(*d)) return *d > 0 ? ".inf" : "-.inf";
    char buf[64];
    auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), *d);
    std::string s(buf, ptr);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
  }
  const std::string& s = std::get<std::string>(v);
  // Plain only when a YAML reader would give back this exact string; otherwise double-quote with escapes.
  const bool looks_typed = is_null_text(s) || parse_int(s) || parse_double(s) || parse_bool(s);
  const bool plain_safe = !looks_typed && s.find_first_of(":#{}[],&*!|>'\"%@`\\\n\t") == std::string::npos &&
                          s.front() != ' ' && s.back() != ' ' && s.front() != '-' && s.front() != '?';
  if (plain_safe) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else out += c;
  }
  return out + "\"";
}

std::string describe_node(const YAML::Node& node) {
  if (node.IsNull()) return "null";
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a sequence";
  const std::string text = "'" + printable_excerpt(node.Scalar()) + "'";
  if (node.Tag() == "!") return text + " (a string: quoted)";
  const std::string tag = yaml_tag(node);
  if (tag.empty()) return text;
  if (tag == "!!str") return text + " (a string: tagged !!str)";
  if (tag.rfind("!!", 0) == 0) return text + " (tagged " + tag + ")";
  return text + " (tagged " + printable_excerpt(tag) + ": luong reads no application tags)";
}

std::string yaml_tag(const YAML::Node& node) {
  const std::string& tag = node.Tag();
  if (tag.empty() || tag == "?" || tag == "!") return "";
  if (tag.rfind(kCoreTagPrefix, 0) == 0) return "!!" + tag.substr(std::string(kCoreTagPrefix).size());
  return tag;
}

bool is_oversized_integer(const YAML::Node& node) {
  if (!node.IsScalar() || is_explicit_string(node)) return false;
  const std::string& s = node.Scalar();
  const size_t start = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
  if (start == s.size()) return false;
  for (size_t i = start; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return !parse_int(s);
}

std::string float_range_problem(const YAML::Node& node) {
  if (!node.IsScalar() || is_explicit_string(node)) return "";
  const std::string& s = node.Scalar();
  const char* b = s.data();
  const char* e = b + s.size();
  if (b != e && (*b == '+' || *b == '-')) ++b;
  if (b == e || !(std::isdigit(static_cast<unsigned char>(*b)) || *b == '.')) return "";
  double v = 0;
  const auto [ptr, ec] = std::from_chars(b, e, v, std::chars_format::general);
  if (ec != std::errc::result_out_of_range || ptr != e) return "";
  // from_chars leaves no value on this error; strtod gives the direction (HUGE_VAL, or 0 / a denormal).
  if (!std::isinf(std::strtod(std::string(b, e).c_str(), nullptr)))
    return "underflows to 0 (out of the float range: the smallest positive number is 4.9e-324)";
  return "overflows (out of the float range: the largest magnitude is 1.7976931348623157e+308)";
}

int second_document_line(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts docs;
  while (docs.starts.size() < 2 && parser.HandleNextDocument(docs)) continue;
  return docs.starts.size() < 2 ? 0 : docs.starts[1].line + 1;
}

int nul_byte_line(const std::string& text) {
  const size_t nul = text.find('\0');
  if (nul == std::string::npos) return 0;
  return static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n')) + 1;
}

Utf8Fault first_invalid_utf8(const std::string& text) {
  const int64_t bad = utf8_invalid_offset(text);
  if (bad < 0) return {};
  const auto at = text.begin() + static_cast<std::ptrdiff_t>(bad);
  const auto line_start = std::find(std::make_reverse_iterator(at), text.rend(), '\n').base();
  return {static_cast<int>(std::count(text.begin(), at, '\n')) + 1, static_cast<int>(at - line_start) + 1,
          static_cast<unsigned char>(*at)};
}

std::string invalid_utf8_text(unsigned char byte) {
  static const char* kHex = "0123456789ABCDEF";
  return std::string("invalid UTF-8 (byte 0x") + kHex[byte >> 4] + kHex[byte & 15] + ")";
}

std::string printable_excerpt(const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes) return printable(s);
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return printable(s.substr(0, cut)) + "... (" + std::to_string(s.size()) + " bytes)";
}

std::string printable(const std::string& s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = static_cast<size_t>(utf8_sequence_length(s, i));
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7f))) {
      out.append("\\x").append(1, kHex[c >> 4]).append(1, kHex[c & 15]);
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace luong
