#include "framework/ops/weight_gemm.h"

#include <type_traits>
#include <vector>

#include "framework/core/precision.h"
#include "framework/kernels/cpu/packed_gemm.h"
#include "framework/kernels/dispatch.h"

namespace luong {
namespace {

// A scope packs the few weights of one step loop (an LSTM layer's W and U, W_c, W_f: a few MB); the bound
// keeps a loop that meets unexpected operands from growing the cache without limit. Past it, weights are
// multiplied unpacked.
constexpr size_t kMaxEntries = 32;
// Products with more rows than this (a layer's input projection over all time steps) are one call per
// pass: OpenBLAS runs them near its peak and packs B at a small fraction of their cost, so they neither
// need a packed copy nor should keep one alive for the rest of the scope (memory). An existing copy is used.
constexpr int64_t kMaxRowsToPack = 256;

struct Entry {
  Tensor weight;  // held: its storage stays allocated, so the address identifies it for the entry's life
  bool trans = false;
  Tensor packed;
};

struct Cache {
  int depth = 0;
  std::vector<Entry> entries;
};

thread_local Cache cache;

const float* find_or_pack(const Tensor& w, bool trans, int64_t m, int64_t k, int64_t n) {
  const float* wp = w.data<float>();
  for (const Entry& e : cache.entries)
    if (e.trans == trans && e.weight.data<float>() == wp && e.weight.shape() == w.shape())
      return e.packed.data<float>();
  if (m > kMaxRowsToPack || cache.entries.size() >= kMaxEntries) return nullptr;
  Tensor packed = Tensor::empty({cpu::packed_size(k, n)}, DType::f32, Device::cpu());
  cpu::pack_b(trans, k, n, wp, packed.data<float>());
  cache.entries.push_back({w, trans, packed});
  return packed.data<float>();
}

}  // namespace

PackedWeightScope::PackedWeightScope() { ++cache.depth; }

PackedWeightScope::~PackedWeightScope() {
  if (--cache.depth == 0) cache.entries.clear();
}

bool is_parameter_view(const Variable& v) {
  if (!v.defined()) return false;
  const VariableImpl& impl = *v.impl();
  return impl.shows_parameter || (impl.grad_fn == nullptr && impl.requires_grad);
}

Variable mark_parameter_view(const Variable& source, Variable result) {
  // Without gradient recording a slice is a plain leaf with no link to its source, so the mark is what
  // tells decoding and validation that the decoder's W_f slice is still a weight.
  if (result.defined() && is_parameter_view(source)) result.impl()->shows_parameter = true;
  return result;
}

template <class T>
void weight_gemm(bool trans_w, int64_t m, int64_t n, int64_t k, const T* a, const Tensor& w, T beta, T* c,
                 bool cacheable) {
  if constexpr (std::is_same_v<T, float>) {
    const bool packable = cacheable && cache.depth > 0 && !w.is_cuda() && m > 0 && n > 0 && k > 0 &&
                          gemm_precision() == GemmPrecision::fp32 && cpu::packed_gemm_enabled();
    if (packable) {
      if (const float* packed = find_or_pack(w, trans_w, m, k, n)) return cpu::gemm_packed(m, n, k, a, packed, beta, c);
    }
  }
  LUONG_KERNEL(w.device(), gemm<T>, false, trans_w, m, n, k, T(1), a, w.data<T>(), beta, c);
}

int64_t packed_weight_cache_entries() { return static_cast<int64_t>(cache.entries.size()); }

template void weight_gemm<float>(bool, int64_t, int64_t, int64_t, const float*, const Tensor&, float, float*, bool);
template void weight_gemm<double>(bool, int64_t, int64_t, int64_t, const double*, const Tensor&, double, double*,
                                  bool);

}  // namespace luong
