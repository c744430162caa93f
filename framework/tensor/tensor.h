// Tensor: a contiguous, row-major view (shape, dtype, device, element offset) into shared Storage.
// Views along leading dims are free: a time step of a (T, B, H) tensor is select(t) -> (B, H), same storage.
// Anything that would need strides (a transpose) is an op that copies; keeping every tensor contiguous keeps
// every kernel a plain loop over pointers and sizes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/dtype.h"
#include "framework/core/shape.h"
#include "framework/tensor/storage.h"

namespace luong {

class Tensor {
 public:
  Tensor() = default;  // undefined tensor

  static Tensor empty(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu());
  static Tensor zeros(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu());
  static Tensor full(const Shape& shape, double value, DType dtype = DType::f32, Device device = Device::cpu());
  // Copies host values into a new tensor of the given dtype (converted) on the given device.
  static Tensor from(const std::vector<double>& values, const Shape& shape, DType dtype = DType::f32,
                     Device device = Device::cpu());
  static Tensor from_ids(const std::vector<int64_t>& ids, const Shape& shape, Device device = Device::cpu());

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size(int64_t d) const;  // negative d counts from the end
  int64_t numel() const { return shape_numel(shape_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  bool is_cuda() const { return device_.is_cuda(); }
  int64_t offset() const { return offset_; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  void* raw() const;
  template <class T>
  T* data() const {
    LUONG_CHECK(dtype_of<T>() == dtype_, "tensor of dtype ", dtype_, " read as ", dtype_of<T>());
    return static_cast<T*>(raw());
  }

  // Views (share storage). select/narrow act on dim 0; view reshapes (same numel).
  Tensor select(int64_t i) const;
  Tensor narrow(int64_t start, int64_t length) const;
  Tensor view(const Shape& shape) const;
  bool shares_storage(const Tensor& o) const { return storage_ && storage_ == o.storage_; }

  // The shape, dtype and device without the data: an undefined tensor that still describes what it held.
  Tensor shape_only() const;
  // Copies.
  Tensor clone() const;
  Tensor to(Device d) const;
  Tensor to(DType t) const;
  void copy_(const Tensor& src);  // same numel; converts dtype; crosses devices
  void fill_(double value);
  void zero_();

  // Host access for tests and small metadata (copies from device if needed).
  std::vector<double> to_vector() const;
  double item() const;

  std::string describe() const;  // "float32(2, 3) on cpu"

 private:
  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;  // in elements
  Shape shape_;
  DType dtype_ = DType::f32;
  Device device_;
};

// Checks that two tensors have the same shape, naming the op and both shapes otherwise.
void check_same_shape(const char* op, const Tensor& a, const Tensor& b);
void check_same_device(const char* op, const Tensor& a, const Tensor& b);

}  // namespace luong
