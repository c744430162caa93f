// The sentence pairs of an encoded corpus, every pair's ids in one 32-bit array.
//
// A std::vector<int64_t> per side cost 8 bytes a token plus about 40 bytes a sentence (its header and heap
// block), held through training by every rank: by these costs about 2.6 GB a process for WMT'14
// English-German (4.5 million pairs, some 270 million subword pieces). Here a pair costs 4 bytes a token and 24
// bytes of index: about 1.2 GB. (Measured on 290,000 pairs of words: 57 -> 35 MB, docs/PERFORMANCE.md.)
//
//   ExampleList list;
//   list.push_back(ExampleIds{{5, 6}, {7}, 12});   // copies the ids in
//   Example e = list[0];                            // views: e.src = {5, 6}, e.tgt = {7}, e.line = 12
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace luong {
class ProcessGroup;
}

namespace luong::nmt {

// One pair as views of the ids in the list that holds it (valid while that list lives and is not added to).
struct Example {
  std::span<const int32_t> src;  // ids, without <s> / </s>
  std::span<const int32_t> tgt;  // ids, without <s> / </s>
  int64_t line = 0;              // 1-based line in the files
};

// A pair to add to a list, as plain vectors (tests, hand-made corpora).
struct ExampleIds {
  std::vector<int64_t> src, tgt;
  int64_t line = 0;
};

// Ids as the int64 vectors of the vocabulary and tensor interfaces.
std::vector<int64_t> to_ids(std::span<const int32_t> ids);

class ExampleList {
 public:
  ExampleList() = default;
  ExampleList(std::initializer_list<ExampleIds> pairs);

  // Throws when an id is outside [0, 2^31), or when the list is shared (below).
  void push_back(const ExampleIds& pair);
  void push_back(const Example& pair);  // a copy of a pair (of this list or another)
  // Ids not held by this list (they are copied in).
  void push_back(std::span<const int32_t> src, std::span<const int32_t> tgt, int64_t line);
  void reserve(size_t pairs, size_t ids) { entries_.reserve(pairs), ids_.reserve(ids); }

  // One copy of the pairs for all the processes of this node (an mpirun job's ranks each hold the same training
  // pairs): collective over `group`; the node's first process puts its pairs in shared memory
  // (framework/dist/node_shared_memory.h) and every process of the node whose own pairs are the same, byte for
  // byte, frees them and reads that copy. False, the list unchanged, with why_not saying why, where it keeps
  // its own. A shared list is read-only; its copies share the memory too.
  bool share_on_node(ProcessGroup& group, std::string& why_not);
  bool shared() const { return shared_ != nullptr; }
  // Bytes of the pairs and their index (whether owned or shared).
  size_t bytes() const;

  size_t size() const { return shared_ ? shared_count_ : entries_.size(); }
  bool empty() const { return size() == 0; }
  Example operator[](size_t i) const {
    const Entry& e = shared_ ? shared_entries_[i] : entries_[i];
    const int32_t* src = (shared_ ? shared_ids_ : ids_.data()) + e.start;
    return {{src, static_cast<size_t>(e.src_len)}, {src + e.src_len, static_cast<size_t>(e.tgt_len)}, e.line};
  }

  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Example;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Example;
    const_iterator(const ExampleList* list, size_t i) : list_(list), i_(i) {}
    Example operator*() const { return (*list_)[i_]; }
    const_iterator& operator++() { return ++i_, *this; }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }

   private:
    const ExampleList* list_;
    size_t i_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

 private:
  struct Entry {
    int64_t start;             // of the source ids in ids_; the target's follow them
    int32_t src_len, tgt_len;  // a sentence over 2^31 tokens does not fit in memory anyway
    int64_t line;
  };
  std::vector<int32_t> ids_;
  std::vector<Entry> entries_;
  // When shared: the node's block (kept mapped by this pointer and its copies) and the pairs in it; ids_ and
  // entries_ are then empty.
  std::shared_ptr<const std::byte> shared_;
  const Entry* shared_entries_ = nullptr;
  const int32_t* shared_ids_ = nullptr;
  size_t shared_count_ = 0, shared_id_count_ = 0;
};

}  // namespace luong::nmt
