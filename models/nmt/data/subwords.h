// A run's subword units: the BPE (bpe.h) that splits each side's words.
//
// Joint (data.bpe_merges learned on both sides' words together, or one data.bpe_codes file): one list of
// merges splits both sides, so a name or a cognate is split alike in source and target. Per side
// (data.bpe_joint: false, or data.bpe_codes with data.bpe_codes_tgt): each side its own list, for language
// pairs that share few words (other scripts), where a joint list spends merges on pieces one side never uses.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "models/nmt/data/bpe.h"

namespace luong::nmt {

struct Subwords {
  std::shared_ptr<const Bpe> src, tgt;  // null: whole words on that side

  // One list for both sides (whole words count as joint).
  static Subwords joint(std::shared_ptr<const Bpe> bpe) { return {bpe, bpe}; }
  bool any() const { return src || tgt; }
  bool is_joint() const { return src == tgt; }
  // "whole words", "10000 BPE merges", "8000 source BPE merges and 7998 target BPE merges".
  std::string describe() const;

  static constexpr const char* kJointKey = "bpe/merges";
  static constexpr const char* kSrcKey = "bpe/merges_src";
  static constexpr const char* kTgtKey = "bpe/merges_tgt";
  // Checkpoint strings: "bpe/merges" when joint (the form every checkpoint had before per-side merges),
  // "bpe/merges_src" and "bpe/merges_tgt" when per side; nothing for whole words.
  void save(std::map<std::string, std::string>& strings) const;
  // The inverse; `where` (a checkpoint path) names the file in the errors of a damaged list.
  static Subwords load(const std::map<std::string, std::string>& strings, const std::string& where);
};

// Whether two encodings split every word of both sides alike.
bool same_subwords(const Subwords& a, const Subwords& b);

}  // namespace luong::nmt
