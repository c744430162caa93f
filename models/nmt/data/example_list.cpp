#include "models/nmt/data/example_list.h"

#include <cstring>
#include <limits>

#include "framework/core/error.h"
#include "framework/dist/node_shared_memory.h"

namespace luong::nmt {
namespace {

std::vector<int32_t> narrow(const std::vector<int64_t>& ids) {
  std::vector<int32_t> out(ids.size());
  for (size_t k = 0; k < ids.size(); ++k) {
    LUONG_CHECK(ids[k] >= 0 && ids[k] <= std::numeric_limits<int32_t>::max(), "token id ", ids[k],
                " is outside [0, 2^31)");
    out[k] = static_cast<int32_t>(ids[k]);
  }
  return out;
}

}  // namespace

std::vector<int64_t> to_ids(std::span<const int32_t> ids) { return {ids.begin(), ids.end()}; }

ExampleList::ExampleList(std::initializer_list<ExampleIds> pairs) {
  for (const ExampleIds& p : pairs) push_back(p);
}

void ExampleList::push_back(const ExampleIds& pair) { push_back(narrow(pair.src), narrow(pair.tgt), pair.line); }

void ExampleList::push_back(const Example& pair) {
  // The spans may point into ids_ itself, which the append can move: copied out first.
  const std::vector<int32_t> src(pair.src.begin(), pair.src.end()), tgt(pair.tgt.begin(), pair.tgt.end());
  push_back(src, tgt, pair.line);
}

void ExampleList::push_back(std::span<const int32_t> src, std::span<const int32_t> tgt, int64_t line) {
  LUONG_CHECK(!shared_, "a list of sentence pairs shared with other processes cannot be added to");
  LUONG_CHECK(src.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()) &&
                  tgt.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()),
              "a sentence of more than 2^31 - 1 tokens");
  entries_.push_back(
      {static_cast<int64_t>(ids_.size()), static_cast<int32_t>(src.size()), static_cast<int32_t>(tgt.size()), line});
  ids_.insert(ids_.end(), src.begin(), src.end());
  ids_.insert(ids_.end(), tgt.begin(), tgt.end());
}

size_t ExampleList::bytes() const {
  return shared_ ? shared_count_ * sizeof(Entry) + shared_id_count_ * sizeof(int32_t)
                 : entries_.size() * sizeof(Entry) + ids_.size() * sizeof(int32_t);
}

bool ExampleList::share_on_node(ProcessGroup& group, std::string& why_not) {
  // The block: the pair and id counts, the index entries, the ids (Entry has no padding, so byte equality is
  // equality of the pairs).
  static_assert(sizeof(Entry) == 24 && alignof(Entry) == 8);
  const uint64_t counts[2] = {entries_.size(), ids_.size()};
  const size_t entry_bytes = entries_.size() * sizeof(Entry), id_bytes = ids_.size() * sizeof(int32_t);
  const size_t total = sizeof counts + entry_bytes + id_bytes;
  if (shared_) {  // the collectives still run, so that the other ranks are not left waiting
    luong::share_on_node(
        group, 0, [](std::byte*) {}, why_not);
    why_not = "the list is shared already";
    return false;
  }
  const NodeSharedBytes block = luong::share_on_node(
      group, total,
      [&](std::byte* p) {
        std::memcpy(p, counts, sizeof counts);
        if (entry_bytes) std::memcpy(p + sizeof counts, entries_.data(), entry_bytes);
        if (id_bytes) std::memcpy(p + sizeof counts + entry_bytes, ids_.data(), id_bytes);
      },
      why_not);
  if (!block) return false;
  const std::byte* p = block.data.get();
  if (std::memcmp(p, counts, sizeof counts) != 0 ||
      (entry_bytes && std::memcmp(p + sizeof counts, entries_.data(), entry_bytes) != 0) ||
      (id_bytes && std::memcmp(p + sizeof counts + entry_bytes, ids_.data(), id_bytes) != 0)) {
    why_not = "this process's pairs differ from those of the node's first process";
    return false;
  }
  shared_ = block.data;
  shared_entries_ = reinterpret_cast<const Entry*>(p + sizeof counts);
  shared_ids_ = reinterpret_cast<const int32_t*>(p + sizeof counts + entry_bytes);
  shared_count_ = entries_.size(), shared_id_count_ = ids_.size();
  std::vector<Entry>().swap(entries_);
  std::vector<int32_t>().swap(ids_);
  return true;
}

}  // namespace luong::nmt
