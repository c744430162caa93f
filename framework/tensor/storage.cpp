#include "framework/tensor/storage.h"

#include <cstring>

#include "framework/core/capture_guard.h"
#include "framework/kernels/cpu/parallel.h"
#include "framework/tensor/device_copy.h"

namespace luong {

Storage::Storage(size_t bytes, Device device) : bytes_(bytes), device_(device) {
  data_ = allocator_for(device).allocate(bytes);
}

Storage::~Storage() { allocator_for(device_).deallocate(data_, bytes_); }

namespace {
DeviceCopyFns g_cuda_fns;
}

void set_cuda_copy_fns(DeviceCopyFns fns) { g_cuda_fns = fns; }

void device_copy(void* dst, Device to, const void* src, Device from, size_t bytes) {
  if (bytes == 0) return;
  if (to.is_cpu() && from.is_cpu()) {
    cpu::copy_bytes(dst, src, bytes);
    return;
  }
  LUONG_CHECK(g_cuda_fns.copy != nullptr, "copy between ", from, " and ", to, " needs the CUDA backend");
  if (to.is_cpu()) check_no_host_read("a copy from the device to the host");
  g_cuda_fns.copy(dst, to, src, from, bytes);
}

void device_zero(void* dst, Device d, size_t bytes) {
  if (bytes == 0) return;
  if (d.is_cpu()) {
    cpu::zero_bytes(dst, bytes);
    return;
  }
  LUONG_CHECK(g_cuda_fns.zero != nullptr, "zeroing memory on ", d, " needs the CUDA backend");
  g_cuda_fns.zero(dst, d, bytes);
}

}  // namespace luong
