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

std::vector<ChangedLeaf> changed_leaves(const std::map<std::string, std::string>& before,
                                        const std::map<std::string, std::string>& after) {
  std::vector<ChangedLeaf> out;
  for (const auto& [key, value] : after) {
    const auto it = before.find(key);
    if (it == before.end())
      out.push_back({key, "(absent)", value, true});
    else if (it->second != value)
      out.push_back({key, it->second, value, false});
  }
  return out;
}

}  // namespace luong
