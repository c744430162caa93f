// Embedding lookup and the strided block copies behind concat, slice and transpose; semantics are
// kernels/cpu/gather.h's. (embedding_backward lives in embedding_backward.cu.)
#include "framework/core/capture_guard.h"
#include "framework/kernels/cuda/common.cuh"
#include "framework/kernels/cuda/kernels.h"

namespace luong::cuda {
namespace {

// Copies the rows of valid ids and records the smallest position holding an invalid one (atomicMin:
// the same answer whatever the thread order).
template <class T>
__global__ void embedding_forward_kernel(int64_t n, int64_t dim, int64_t rows, const int64_t* ids, const T* table,
                                         T* out, unsigned long long* first_bad) {
  for (int64_t i = global_index(); i < n; i += global_stride())
    if (first_bad && (ids[i] < 0 || ids[i] >= rows)) atomicMin(first_bad, static_cast<unsigned long long>(i));
  const int64_t total = n * dim;
  for (int64_t idx = global_index(); idx < total; idx += global_stride()) {
    const int64_t id = ids[idx / dim];
    if (id >= 0 && id < rows) out[idx] = table[id * dim + idx % dim];
  }
}

template <class T>
__global__ void gather_kernel(int64_t n, const int64_t* index, const T* src, T* out) {
  for (int64_t i = global_index(); i < n; i += global_stride()) out[i] = src[index[i]];
}

template <class T>
__global__ void copy_block_kernel(int64_t outer, int64_t inner, int64_t len, const T* src, int64_t src_len,
                                  int64_t src_start, T* dst, int64_t dst_len, int64_t dst_start, bool accumulate) {
  const int64_t chunk = len * inner, total = outer * chunk;
  for (int64_t idx = global_index(); idx < total; idx += global_stride()) {
    const int64_t o = idx / chunk, r = idx % chunk;
    const T v = src[(o * src_len + src_start) * inner + r];
    T& d = dst[(o * dst_len + dst_start) * inner + r];
    d = accumulate ? d + v : v;
  }
}

// Up to kPartsPerLaunch parts of concat_parts, passed by value (no table to upload, so nothing for a graph
// capture to freeze but the pointers themselves). Part p is copied by the blocks of grid row p, 16 bytes a
// thread when its source, destination and size allow it.
constexpr int kPartsPerLaunch = 32;
struct PartTable {
  const char* src[kPartsPerLaunch];
  int64_t begin[kPartsPerLaunch + 1];  // byte offsets into dst
};

__global__ void concat_parts_kernel(PartTable t, char* dst) {
  const int p = blockIdx.y;
  const char* s = t.src[p];
  char* d = dst + t.begin[p];
  const int64_t n = t.begin[p + 1] - t.begin[p];
  if (((reinterpret_cast<uintptr_t>(s) | reinterpret_cast<uintptr_t>(d) | static_cast<uintptr_t>(n)) & 15) == 0) {
    const uint4* s4 = reinterpret_cast<const uint4*>(s);
    uint4* d4 = reinterpret_cast<uint4*>(d);
    for (int64_t i = global_index(); i < n / 16; i += global_stride()) d4[i] = s4[i];
  } else {
    for (int64_t i = global_index(); i < n; i += global_stride()) d[i] = s[i];
  }
}

// Source-ordered (coalesced reads): element (o, i, m, j, k) of (outer, a, mid, b, inner) goes to (o, j, m, i, k).
template <class T>
__global__ void transpose_kernel(int64_t outer, int64_t a, int64_t mid, int64_t b, int64_t inner, const T* src, T* dst,
                                 bool accumulate) {
  const int64_t total = outer * a * mid * b * inner;
  for (int64_t idx = global_index(); idx < total; idx += global_stride()) {
    int64_t t = idx;
    const int64_t k = t % inner;
    t /= inner;
    const int64_t j = t % b;
    t /= b;
    const int64_t m = t % mid;
    t /= mid;
    const int64_t i = t % a;
    const int64_t o = t / a;
    T& d = dst[(((o * b + j) * mid + m) * a + i) * inner + k];
    d = accumulate ? d + src[idx] : src[idx];
  }
}

}  // namespace

template <class T>
int64_t embedding_forward(int64_t n, int64_t dim, int64_t rows, const int64_t* ids, const T* table, T* out) {
  if (n == 0) return -1;
  const int64_t work = n * dim > n ? n * dim : n;
  // A captured step cannot read the check back: the ids a graph reads are checked by whoever stages them
  // (train/captured_step.h). An out-of-range id then leaves its row unwritten; nothing reads outside the table.
  const bool check = !capturing();
  DeviceContext& ctx = context();
  std::unique_lock<std::mutex> lock(ctx.scratch_mutex, std::defer_lock);
  unsigned long long* first_bad = nullptr;
  if (check) {
    lock.lock();
    first_bad = reinterpret_cast<unsigned long long*>(ctx.result);
    LUONG_CUDA_CHECK(cudaMemsetAsync(first_bad, 0xFF, sizeof(*first_bad), ctx.stream));  // "none" = all ones
  }
  embedding_forward_kernel<<<grid_for(work), kThreads, 0, ctx.stream>>>(n, dim, rows, ids, table, out, first_bad);
  LUONG_CUDA_CHECK_LAUNCH("embedding_forward_kernel");
  if (!check) return -1;
  read_result(ctx, sizeof(*first_bad));
  const unsigned long long bad = *reinterpret_cast<const unsigned long long*>(ctx.host_result);
  return bad == ~0ull ? -1 : static_cast<int64_t>(bad);
}

template <class T>
void gather(int64_t n, const int64_t* index, const T* src, T* out) {
  if (n == 0) return;
  gather_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, index, src, out);
  LUONG_CUDA_CHECK_LAUNCH("gather_kernel");
}

template <class T>
void copy_block(int64_t outer, int64_t inner, int64_t len, const T* src, int64_t src_len, int64_t src_start, T* dst,
                int64_t dst_len, int64_t dst_start, bool accumulate) {
  const int64_t total = outer * len * inner;
  if (total == 0) return;
  copy_block_kernel<<<grid_for(total), kThreads, 0, stream()>>>(outer, inner, len, src, src_len, src_start, dst,
                                                                dst_len, dst_start, accumulate);
  LUONG_CUDA_CHECK_LAUNCH("copy_block_kernel");
}

void concat_parts(int64_t count, const void* const* src, const int64_t* bytes, void* dst) {
  int64_t at = 0;
  for (int64_t first = 0; first < count; first += kPartsPerLaunch) {
    const int parts = static_cast<int>(count - first < kPartsPerLaunch ? count - first : kPartsPerLaunch);
    PartTable t{};
    int64_t largest = 0;
    t.begin[0] = 0;
    for (int p = 0; p < parts; ++p) {
      t.src[p] = static_cast<const char*>(src[first + p]);
      t.begin[p + 1] = t.begin[p] + bytes[first + p];
      largest = bytes[first + p] > largest ? bytes[first + p] : largest;
    }
    if (largest > 0) {
      const dim3 grid(grid_for((largest + 15) / 16), static_cast<unsigned>(parts));
      concat_parts_kernel<<<grid, kThreads, 0, stream()>>>(t, static_cast<char*>(dst) + at);
      LUONG_CUDA_CHECK_LAUNCH("concat_parts_kernel");
    }
    at += t.begin[parts];
  }
}

template <class T>
void transpose(int64_t outer, int64_t a, int64_t mid, int64_t b, int64_t inner, const T* src, T* dst, bool accumulate) {
  const int64_t total = outer * a * mid * b * inner;
  if (total == 0) return;
  transpose_kernel<<<grid_for(total), kThreads, 0, stream()>>>(outer, a, mid, b, inner, src, dst, accumulate);
  LUONG_CUDA_CHECK_LAUNCH("transpose_kernel");
}

#define LUONG_INSTANTIATE(T)                                                                                       \
  template int64_t embedding_forward<T>(int64_t, int64_t, int64_t, const int64_t*, const T*, T*);                \
  template void gather<T>(int64_t, const int64_t*, const T*, T*);                                                \
  template void copy_block<T>(int64_t, int64_t, int64_t, const T*, int64_t, int64_t, T*, int64_t, int64_t, bool); \
  template void transpose<T>(int64_t, int64_t, int64_t, int64_t, int64_t, const T*, T*, bool);
LUONG_INSTANTIATE(float)
LUONG_INSTANTIATE(double)
LUONG_INSTANTIATE(int64_t)
#undef LUONG_INSTANTIATE

}  // namespace luong::cuda
