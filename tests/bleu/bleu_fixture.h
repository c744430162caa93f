// Paths and parsed contents of the sacrebleu-generated fixtures in tests/bleu/data (see make_expected.py).
#pragma once
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace luong::testing {

inline std::string bleu_data(const std::string& name) { return std::string(LUONG_SOURCE_DIR) + "/tests/bleu/data/" + name; }

inline nlohmann::json load_bleu_json(const std::string& name) {
  std::ifstream in(bleu_data(name));
  return nlohmann::json::parse(in);
}

// significance.json (numpy's draws, sacreBLEU's confidence intervals and paired tests), read once.
inline const nlohmann::json& significance_fixture() {
  static const nlohmann::json j = load_bleu_json("significance.json");
  return j;
}

}  // namespace luong::testing
