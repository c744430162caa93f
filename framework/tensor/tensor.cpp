#include "framework/tensor/tensor.h"

#include <cstring>

#include "framework/core/capture_guard.h"
#include "framework/tensor/device_copy.h"

namespace luong {
namespace {

// Converts n elements between host buffers of possibly different dtypes (bf16 is the top half of a float).
double load_host(const void* p, DType t, int64_t i) {
  switch (t) {
    case DType::f32: return static_cast<const float*>(p)[i];
    case DType::f64: return static_cast<const double*>(p)[i];
    case DType::i64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::u8: return static_cast<const uint8_t*>(p)[i];
    case DType::bf16: {
      uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t*>(p)[i]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
  }
  return 0;
}

void store_host(void* p, DType t, int64_t i, double v) {
  switch (t) {
    case DType::f32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DType::f64: static_cast<double*>(p)[i] = v; break;
    case DType::i64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
    case DType::u8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
    case DType::bf16: {
      // Round to nearest even.
      float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      bits += 0x7FFFu + ((bits >> 16) & 1u);
      static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(bits >> 16);
      break;
    }
  }
}

}  // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  for (auto d : shape) LUONG_CHECK(d >= 0, "negative extent in shape ", shape_str(shape));
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.device_ = device;
  t.storage_ = std::make_shared<Storage>(static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype), device);
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  t.zero_();
  return t;
}

Tensor Tensor::full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  t.fill_(value);
  return t;
}

Tensor Tensor::from(const std::vector<double>& values, const Shape& shape, DType dtype, Device device) {
  LUONG_CHECK(static_cast<int64_t>(values.size()) == shape_numel(shape), "Tensor::from: ", values.size(),
              " values for shape ", shape_str(shape));
  Tensor host = empty(shape, dtype);
  for (size_t i = 0; i < values.size(); ++i) store_host(host.raw(), dtype, static_cast<int64_t>(i), values[i]);
  return device.is_cpu() ? host : host.to(device);
}

Tensor Tensor::from_ids(const std::vector<int64_t>& ids, const Shape& shape, Device device) {
  LUONG_CHECK(static_cast<int64_t>(ids.size()) == shape_numel(shape), "Tensor::from_ids: ", ids.size(),
              " ids for shape ", shape_str(shape));
  Tensor host = empty(shape, DType::i64);
  if (!ids.empty()) std::memcpy(host.raw(), ids.data(), ids.size() * sizeof(int64_t));
  return device.is_cpu() ? host : host.to(device);
}

int64_t Tensor::size(int64_t d) const {
  const int64_t n = dim();
  if (d < 0) d += n;
  LUONG_CHECK(d >= 0 && d < n, "dim ", d, " out of range for shape ", shape_str(shape_));
  return shape_[static_cast<size_t>(d)];
}

void* Tensor::raw() const {
  LUONG_CHECK(storage_ != nullptr, "access to an undefined tensor");
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

Tensor Tensor::select(int64_t i) const {
  LUONG_CHECK(dim() >= 1, "select on a 0-d tensor");
  LUONG_CHECK(i >= 0 && i < shape_[0], "select index ", i, " out of range for shape ", shape_str(shape_));
  Tensor t = *this;
  t.shape_ = Shape(shape_.begin() + 1, shape_.end());
  t.offset_ = offset_ + i * shape_numel(t.shape_);
  return t;
}

Tensor Tensor::narrow(int64_t start, int64_t length) const {
  LUONG_CHECK(dim() >= 1, "narrow on a 0-d tensor");
  LUONG_CHECK(start >= 0 && length >= 0 && start + length <= shape_[0], "narrow [", start, ", ", start + length,
              ") out of range for shape ", shape_str(shape_));
  Tensor t = *this;
  t.shape_[0] = length;
  t.offset_ = offset_ + start * shape_prod(shape_, 1, shape_.size());
  return t;
}

Tensor Tensor::view(const Shape& shape) const {
  Shape s = shape;
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      LUONG_CHECK(infer < 0, "view: more than one -1 in ", shape_str(shape));
      infer = static_cast<int64_t>(i);
    } else {
      known *= s[i];
    }
  }
  if (infer >= 0) {
    LUONG_CHECK(known > 0 && numel() % known == 0, "view: cannot infer -1 in ", shape_str(shape), " from ",
                shape_str(shape_));
    s[static_cast<size_t>(infer)] = numel() / known;
  }
  LUONG_CHECK(shape_numel(s) == numel(), "view: shape ", shape_str(shape), " does not match ", shape_str(shape_));
  Tensor t = *this;
  t.shape_ = s;
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_, dtype_, device_);
  t.copy_(*this);
  return t;
}

Tensor Tensor::to(Device d) const {
  if (d == device_) return *this;
  Tensor t = empty(shape_, dtype_, d);
  t.copy_(*this);
  return t;
}

Tensor Tensor::to(DType dt) const {
  if (dt == dtype_) return *this;
  Tensor t = empty(shape_, dt, device_);
  t.copy_(*this);
  return t;
}

void Tensor::copy_(const Tensor& src) {
  LUONG_CHECK(src.numel() == numel(), "copy_: ", src.describe(), " into ", describe());
  if (src.dtype_ == dtype_) {
    device_copy(raw(), device_, src.raw(), src.device_, nbytes());
    return;
  }
  // Dtype conversion goes through the host; it happens only at set-up (casts), never per step.
  check_no_host_read("a dtype conversion (Tensor::copy_ between dtypes)");
  Tensor s = src.to(Device::cpu());
  Tensor d = device_.is_cpu() ? *this : empty(shape_, dtype_);
  for (int64_t i = 0; i < numel(); ++i) store_host(d.raw(), dtype_, i, load_host(s.raw(), s.dtype_, i));
  if (!device_.is_cpu()) copy_(d);
}

void Tensor::fill_(double value) {
  if (value == 0.0) return zero_();
  Tensor host = device_.is_cpu() ? *this : empty(shape_, dtype_);
  for (int64_t i = 0; i < numel(); ++i) store_host(host.raw(), dtype_, i, value);
  if (!device_.is_cpu()) copy_(host);
}

void Tensor::zero_() { device_zero(raw(), device_, nbytes()); }

std::vector<double> Tensor::to_vector() const {
  check_no_host_read("Tensor::to_vector / item");
  Tensor host = to(Device::cpu());
  std::vector<double> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) out[static_cast<size_t>(i)] = load_host(host.raw(), dtype_, i);
  return out;
}

double Tensor::item() const {
  LUONG_CHECK(numel() == 1, "item() on ", describe(), " (needs exactly one element)");
  return to_vector()[0];
}

Tensor Tensor::shape_only() const {
  Tensor t = *this;
  t.storage_ = nullptr;
  t.offset_ = 0;
  return t;
}

std::string Tensor::describe() const {
  if (!defined())
    return shape_.empty() ? "undefined tensor" : str(dtype_name(dtype_), shape_str(shape_), " (data released)");
  return str(dtype_name(dtype_), shape_str(shape_), " on ", device_.name());
}

void check_same_shape(const char* op, const Tensor& a, const Tensor& b) {
  LUONG_CHECK(a.shape() == b.shape(), op, ": shape mismatch ", shape_str(a.shape()), " vs ", shape_str(b.shape()));
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  LUONG_CHECK(a.device() == b.device(), op, ": tensors on different devices (", a.device(), " and ", b.device(), ")");
}

}  // namespace luong
