// Reading optimizer and schedule state back from a StateDict, with errors that name the component and key.
#pragma once
#include <string>

#include "framework/io/state_dict.h"

namespace luong::optim_detail {

inline std::string keys_of(const StateDict& in) {
  std::string out;
  auto add = [&](const std::string& k) { out += (out.empty() ? "" : ", ") + k; };
  for (const auto& [k, _] : in.tensors) add(k);
  for (const auto& [k, _] : in.ints) add(k);
  for (const auto& [k, _] : in.floats) add(k);
  for (const auto& [k, _] : in.strings) add(k);
  return out.empty() ? "none" : out;
}

template <class Map>
const typename Map::mapped_type& require(const Map& map, const StateDict& in, const std::string& key,
                                         const std::string& who) {
  auto it = map.find(key);
  if (it == map.end()) LUONG_FAIL(who, " state: missing key '", key, "' (present: ", keys_of(in), ")");
  return it->second;
}

// Checks that the state was written by a component with this name (a resumed run must not switch).
inline void check_name(const StateDict& in, const std::string& kind, const std::string& name) {
  const std::string& saved = require(in.strings, in, "name", kind + " '" + name + "'");
  LUONG_CHECK(saved == name, kind, " state was saved by '", saved, "' but is being loaded into '", name, "'");
}

// "a, b, c" from a name list.
template <class Names>
std::string join(const Names& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace luong::optim_detail
