#include <cstdlib>
#include <mutex>

#include "framework/memory/allocator.h"

namespace luong {
namespace {

// 64-byte aligned so vectorised kernels and BLAS see cache-line-aligned rows.
class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    if (bytes == 0) return nullptr;
    const size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    LUONG_CHECK(p != nullptr, "out of CPU memory allocating ", bytes, " bytes");
    const int64_t now = allocated_.fetch_add(static_cast<int64_t>(bytes)) + static_cast<int64_t>(bytes);
    int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {}
    num_allocs_.fetch_add(1);
    return p;
  }
  void deallocate(void* ptr, size_t bytes) override {
    if (!ptr) return;
    allocated_.fetch_sub(static_cast<int64_t>(bytes));
    std::free(ptr);
  }
  MemoryStats stats() const override { return {allocated_.load(), 0, peak_.load(), num_allocs_.load()}; }
  void reset_peak() override { peak_.store(allocated_.load()); }

 private:
  std::atomic<int64_t> allocated_{0}, peak_{0}, num_allocs_{0};
};

CudaAllocatorFactory g_cuda_factory = nullptr;

}  // namespace

void set_cuda_allocator_factory(CudaAllocatorFactory f) { g_cuda_factory = f; }

Allocator& allocator_for(Device d) {
  static CpuAllocator cpu;
  if (d.is_cpu()) return cpu;
  LUONG_CHECK(g_cuda_factory != nullptr, "device ", d.name(),
              " requested but this build has no CUDA backend (configure with -DLUONG_CUDA=ON)");
  return g_cuda_factory(d.index);
}

}  // namespace luong
