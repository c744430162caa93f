// Element types and devices.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "framework/core/error.h"

namespace luong {

// f64 exists for exact gradient checks on the CPU; bf16 is a storage type for CUDA mixed precision;
// i64 holds token ids; u8 holds masks (1 = keep).
enum class DType : uint8_t { f32, f64, bf16, i64, u8 };

inline size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::bf16: return 2;
    case DType::i64: return 8;
    case DType::u8: return 1;
  }
  return 0;
}

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::bf16: return "bfloat16";
    case DType::i64: return "int64";
    case DType::u8: return "uint8";
  }
  return "?";
}
inline std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::u8; }

// Calls f(T{}) with T the C++ type of a floating dtype; the single place where float kernels are chosen.
template <class F>
decltype(auto) dispatch_float(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
    default: LUONG_FAIL(op, ": dtype ", dtype_name(t), " is not supported on this path (need float32 or float64)");
  }
}

struct Device {
  enum class Kind : uint8_t { cpu, cuda };
  Kind kind = Kind::cpu;
  int index = 0;

  static Device cpu() { return {}; }
  static Device cuda(int i = 0) { return {Kind::cuda, i}; }
  // Parses "cpu", "cuda", "cuda:N".
  static Device parse(const std::string& s);
  bool is_cpu() const { return kind == Kind::cpu; }
  bool is_cuda() const { return kind == Kind::cuda; }
  bool operator==(const Device& o) const { return kind == o.kind && (is_cpu() || index == o.index); }
  std::string name() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }
};
inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.name(); }

}  // namespace luong
