#include "models/nmt/data/subwords.h"

#include "framework/core/error.h"
#include "framework/io/checkpoint.h"

namespace luong::nmt {
namespace {

constexpr const char* kJointKey = Subwords::kJointKey;
constexpr const char* kSrcKey = Subwords::kSrcKey;
constexpr const char* kTgtKey = Subwords::kTgtKey;

std::shared_ptr<const Bpe> stored_merges(const std::map<std::string, std::string>& strings, const std::string& key,
                                         const std::string& where) {
  const auto it = strings.find(key);
  if (it == strings.end()) return nullptr;
  try {
    return std::make_shared<const Bpe>(Bpe::from_list(split_string_list(it->second)));
  } catch (const Error& e) {
    LUONG_FAIL("checkpoint ", where, ": '", key, "': ", e.what());
  }
}

}  // namespace

std::string Subwords::describe() const {
  if (is_joint()) return describe_subwords(src.get());
  const auto side = [](const Bpe* bpe, const char* name) {
    return bpe ? str(bpe->merges(), " ", name, " BPE merges") : str("whole ", name, " words");
  };
  return side(src.get(), "source") + " and " + side(tgt.get(), "target");
}

void Subwords::save(std::map<std::string, std::string>& strings) const {
  if (is_joint()) {
    if (src) strings[kJointKey] = join_string_list(src->to_list());
    return;
  }
  if (src) strings[kSrcKey] = join_string_list(src->to_list());
  if (tgt) strings[kTgtKey] = join_string_list(tgt->to_list());
}

Subwords Subwords::load(const std::map<std::string, std::string>& strings, const std::string& where) {
  const bool joint = strings.count(kJointKey), apart = strings.count(kSrcKey) || strings.count(kTgtKey);
  LUONG_CHECK(!(joint && apart), "checkpoint ", where, " holds both joint BPE merges ('", kJointKey,
              "') and per-side ones ('", kSrcKey, "', '", kTgtKey, "'): it was not written by luong");
  if (joint) return Subwords::joint(stored_merges(strings, kJointKey, where));
  return {stored_merges(strings, kSrcKey, where), stored_merges(strings, kTgtKey, where)};
}

bool same_subwords(const Subwords& a, const Subwords& b) {
  // A joint list and two equal per-side lists split alike; only what each side sees matters.
  return same_subwords(a.src.get(), b.src.get()) && same_subwords(a.tgt.get(), b.tgt.get());
}

}  // namespace luong::nmt
