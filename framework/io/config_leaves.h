// A resolved config (Config::dump() text) as flat "section.key" -> value pairs, so that two configs can be
// compared key by key: a resume against its checkpoint's config, the ranks of a job, a sweep trial against
// the config it was trained with.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace luong {

// Every leaf of the YAML text as "section.key" -> its value as flow YAML text; empty if it does not parse.
std::map<std::string, std::string> config_leaves(const std::string& text);

// One key whose value differs between two configs.
struct ChangedLeaf {
  std::string key;
  std::string before;  // "(absent)" when the first config lacks the key
  std::string after;
  bool absent_before = false;
};
// The keys of `after` whose values differ in `before` (or that it lacks), in key order. Keys only `before` has
// are not listed: configs are compared after both were resolved against one schema.
std::vector<ChangedLeaf> changed_leaves(const std::map<std::string, std::string>& before,
                                        const std::map<std::string, std::string>& after);

}  // namespace luong
