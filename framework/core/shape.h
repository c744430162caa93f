// Shapes: a small vector of extents, printed as (2, 3, 4) in every error message.
//
// Why not std::vector<int64_t>: every Tensor carries a Shape, and the autograd engine copies tensors (views, saved
// inputs, shape-only records of released activations) thousands of times per training step. With a heap vector each
// copy was a malloc and a free; inline extents (with Node::attach's one-output form, made at the same time) took a
// host-bound step from 24,756 allocations to 10,851 (docs/PERFORMANCE.md, "The engine's host time, part two").
// Models use rank <= 4; kMaxRank leaves room. Copying a tensor now allocates nothing beyond its shared_ptr.
// The interface is the subset of std::vector the code base uses, so call sites read the same.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include "framework/core/error.h"

namespace luong {

class Shape {
 public:
  static constexpr size_t kMaxRank = 8;
  using value_type = int64_t;
  using size_type = size_t;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reference = int64_t&;
  using const_reference = const int64_t&;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  template <std::input_iterator It>
  Shape(It first, It last) {
    assign(first, last);
  }
  // Interop with code that builds extents in a vector (HDF5 dims, parsed configs, tests).
  Shape(const std::vector<int64_t>& dims) { assign(dims.begin(), dims.end()); }  // NOLINT(runtime/explicit)

  template <std::input_iterator It>
  void assign(It first, It last) {
    size_ = 0;
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t& operator[](size_t i) { return dims_[i]; }
  const int64_t& operator[](size_t i) const { return dims_[i]; }
  int64_t& front() { return dims_[0]; }
  const int64_t& front() const { return dims_[0]; }
  int64_t& back() { return dims_[size_ - 1]; }
  const int64_t& back() const { return dims_[size_ - 1]; }
  int64_t* data() { return dims_; }
  const int64_t* data() const { return dims_; }
  iterator begin() { return dims_; }
  iterator end() { return dims_ + size_; }
  const_iterator begin() const { return dims_; }
  const_iterator end() const { return dims_ + size_; }
  std::reverse_iterator<const_iterator> rbegin() const { return std::reverse_iterator<const_iterator>(end()); }
  std::reverse_iterator<const_iterator> rend() const { return std::reverse_iterator<const_iterator>(begin()); }

  void clear() { size_ = 0; }
  void push_back(int64_t d) {
    LUONG_CHECK(size_ < kMaxRank, "a tensor may have at most ", kMaxRank, " dimensions");
    dims_[size_++] = d;
  }
  void pop_back() { --size_; }
  void resize(size_t n, int64_t fill = 0) {
    LUONG_CHECK(n <= kMaxRank, "a tensor may have at most ", kMaxRank, " dimensions, not ", n);
    for (size_t i = size_; i < n; ++i) dims_[i] = fill;
    size_ = static_cast<uint8_t>(n);
  }
  iterator insert(const_iterator pos, int64_t d) {
    const size_t at = static_cast<size_t>(pos - dims_);
    push_back(d);  // checks the rank
    std::rotate(dims_ + at, dims_ + size_ - 1, dims_ + size_);
    return dims_ + at;
  }
  iterator erase(const_iterator pos) {
    const size_t at = static_cast<size_t>(pos - dims_);
    std::copy(dims_ + at + 1, dims_ + size_, dims_ + at);
    --size_;
    return dims_ + at;
  }

  std::vector<int64_t> to_vector() const { return {begin(), end()}; }

  friend bool operator==(const Shape& a, const Shape& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

 private:
  int64_t dims_[kMaxRank] = {};
  uint8_t size_ = 0;
};

inline int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

inline std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

inline std::ostream& operator<<(std::ostream& os, const Shape& s) { return os << shape_str(s); }

// Product of extents in [begin, end).
inline int64_t shape_prod(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) n *= s[i];
  return n;
}

}  // namespace luong
