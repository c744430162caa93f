#include "framework/io/state_dict.h"

namespace luong {
namespace {

template <class Map>
void merge_map(Map& into, const Map& from, const std::string& prefix) {
  for (const auto& [k, v] : from) into[prefix.empty() ? k : prefix + "/" + k] = v;
}

template <class Map>
void sub_map(Map& into, const Map& from, const std::string& prefix) {
  const std::string p = prefix + "/";
  for (const auto& [k, v] : from)
    if (k.compare(0, p.size(), p) == 0) into[k.substr(p.size())] = v;
}

}  // namespace

void StateDict::merge(const StateDict& other, const std::string& prefix) {
  merge_map(tensors, other.tensors, prefix);
  merge_map(ints, other.ints, prefix);
  merge_map(floats, other.floats, prefix);
  merge_map(strings, other.strings, prefix);
}

StateDict StateDict::sub(const std::string& prefix) const {
  StateDict out;
  sub_map(out.tensors, tensors, prefix);
  sub_map(out.ints, ints, prefix);
  sub_map(out.floats, floats, prefix);
  sub_map(out.strings, strings, prefix);
  return out;
}

}  // namespace luong
