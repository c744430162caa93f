// A name -> factory registry. Layers, optimizers, schedules and ops register themselves by name with one
// line in their own file, so adding a variant never means editing a central list.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/error.h"
#include "framework/core/suggest.h"

namespace luong {

template <class Factory>
class Registry {
 public:
  // One registry per Factory type, created on first use (safe during static initialisation).
  static Registry& instance() {
    static Registry r;
    return r;
  }
  bool add(const std::string& name, Factory f, std::string help = {}) {
    LUONG_CHECK(!entries_.count(name), "duplicate registration of '", name, "'");
    entries_[name] = Entry{std::move(f), std::move(help)};
    return true;
  }
  bool contains(const std::string& name) const { return entries_.count(name) > 0; }
  const Factory& get(const std::string& name) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      std::string known;
      for (auto& [k, _] : entries_) known += (known.empty() ? "" : ", ") + k;
      LUONG_FAIL("unknown name '", name, "' (registered: ", known, ")", did_you_mean(name, names()));
    }
    return it->second.factory;
  }
  const std::string& help(const std::string& name) const { return entries_.at(name).help; }
  // Sorted, so listings and tests iterate in a stable order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (auto& [k, _] : entries_) out.push_back(k);
    return out;
  }

 private:
  struct Entry {
    Factory factory;
    std::string help;
  };
  std::map<std::string, Entry> entries_;
};

}  // namespace luong

#define LUONG_CONCAT_INNER(a, b) a##b
#define LUONG_CONCAT(a, b) LUONG_CONCAT_INNER(a, b)
