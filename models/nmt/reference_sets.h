// The references of a corpus score (BLEU, chrF): one set per reference file, each holding one reference per
// hypothesis. Checks the sets once and hands out the references of each sentence.
#pragma once
#include <string>
#include <vector>

#include "framework/core/error.h"

namespace luong {

class ReferenceSets {
 public:
  // Errors start with `metric`: "bleu: 37 hypotheses but 36 references in reference set 2" (the set named only
  // when there are several).
  ReferenceSets(const std::vector<std::vector<std::string>>& sets, size_t hypotheses, const char* metric)
      : sets_(sets), refs_(sets.size()) {
    LUONG_CHECK(!sets.empty(), metric, ": no reference");
    for (size_t k = 0; k < sets.size(); ++k)
      if (sets[k].size() != hypotheses)
        LUONG_FAIL(metric, ": ", hypotheses, " hypotheses but ", sets[k].size(), " references",
                   sets.size() > 1 ? str(" in reference set ", k + 1) : "");
  }
  // The references of sentence i (valid until the next call).
  const std::vector<std::string>& of(size_t i) {
    for (size_t k = 0; k < sets_.size(); ++k) refs_[k] = sets_[k][i];
    return refs_;
  }
  int count() const { return static_cast<int>(sets_.size()); }

 private:
  const std::vector<std::vector<std::string>>& sets_;
  std::vector<std::string> refs_;
};

}  // namespace luong
