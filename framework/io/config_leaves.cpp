#include "framework/io/config_leaves.h"

#include <yaml-cpp/yaml.h>

namespace luong {
namespace {

void flatten(const YAML::Node& node, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node)
      flatten(kv.second, prefix.empty() ? kv.first.as<std::string>() : prefix + "." + kv.first.as<std::string>(),
              out);
    return;
  }
  YAML::Emitter e;
  e << YAML::Flow << node;
  out[prefix] = e.c_str();
}

}  // namespace

std::map<std::string, std::string> config_leaves(const std::string& text) {
  std::map<std::string, std::string> out;
  try {
    flatten(YAML::Load(text), "", out);
  } catch (const YAML::Exception&) {
    // A stored config that does not parse has nothing to compare: its loader reports it elsewhere.
  }
  return out;
}

}  // namespace luong
