#include "framework/ops/weight_gemm.h"

#include <atomic>
#include <type_traits>
#include <vector>

#include "framework/core/precision.h"
#include "framework/kernels/cpu/bf16_gemm.h"
#include "framework/kernels/cpu/gemm_profile.h"
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

// What an entry keeps of its weight: the CPU's packed panels (one layout per transposition), its bf16 panels
// for AMX under bf16 GEMM precision (likewise), or a CUDA weight's bf16 copy under bf16 GEMM precision (cuBLAS
// reads it either way round, so one per weight).
enum class Form { cpu_packed, cpu_packed_transposed, cpu_bf16, cpu_bf16_transposed, cuda_bf16 };

struct Entry {
  Tensor weight;  // held: its storage stays allocated, so the address identifies it for the entry's life
  Form form = Form::cpu_packed;
  Tensor copy;  // the packed panels (f32 or bf16) or the bf16 values
};

struct Cache {
  int depth = 0;
  std::vector<Entry> entries;
};

thread_local Cache cache;
std::atomic<bool> bf16_copies_enabled{true};

const Entry* find(const Tensor& w, Form form) {
  for (const Entry& e : cache.entries)
    if (e.form == form && e.weight.raw() == w.raw() && e.weight.shape() == w.shape()) return &e;
  return nullptr;
}

const float* find_or_pack(const Tensor& w, bool trans, int64_t m, int64_t k, int64_t n) {
  const Form form = trans ? Form::cpu_packed_transposed : Form::cpu_packed;
  if (const Entry* e = find(w, form)) return e->copy.data<float>();
  if (m > kMaxRowsToPack || cache.entries.size() >= kMaxEntries) return nullptr;
  Tensor packed = Tensor::empty({cpu::packed_size(k, n)}, DType::f32, Device::cpu());
  cpu::pack_b(trans, k, n, w.data<float>(), packed.data<float>());
  cache.entries.push_back({w, form, packed});
  return packed.data<float>();
}

// A CPU weight's bf16 panels for the bf16 kernels (AMX or AVX512-BF16 read the same ones). Unlike the float32
// packing, large products (the generator's chunks) keep one too: the tiles multiply so fast that packing the weight
// per product would cost more than the product (docs/PERFORMANCE.md, "bf16 on AMX").
const uint16_t* find_or_pack_bf16(const Tensor& w, bool trans, int64_t k, int64_t n) {
  const Form form = trans ? Form::cpu_bf16_transposed : Form::cpu_bf16;
  if (const Entry* e = find(w, form)) return static_cast<const uint16_t*>(e->copy.raw());
  if (cache.entries.size() >= kMaxEntries) return nullptr;
  Tensor packed = Tensor::empty({cpu::bf16_packed_size(k, n)}, DType::bf16, Device::cpu());
  cpu::bf16_pack_b(trans, k, n, w.data<float>(), static_cast<uint16_t*>(packed.raw()));
  cache.entries.push_back({w, form, packed});
  return static_cast<const uint16_t*>(packed.raw());
}

#ifdef LUONG_WITH_CUDA
// A CUDA weight's bf16 copy for this scope. Converting a 1000 x 4000 weight reads 16 MB and writes 8 MB:
// done for every product, the decoder's step loop and the recurrences of the paper's model convert their
// weights a few hundred times a step. Unlike the CPU's packing, large products keep a copy too: it costs
// half the weight's size in device memory and the same weight usually serves small products in the scope.
const uint16_t* find_or_convert(const Tensor& w) {
  if (const Entry* e = find(w, Form::cuda_bf16)) return static_cast<const uint16_t*>(e->copy.raw());
  if (cache.entries.size() >= kMaxEntries) return nullptr;
  Tensor copy = Tensor::empty(w.shape(), DType::bf16, w.device());
  cuda::float_to_bf16(w.numel(), w.data<float>(), static_cast<uint16_t*>(copy.raw()));
  cache.entries.push_back({w, Form::cuda_bf16, copy});
  return static_cast<const uint16_t*>(copy.raw());
}
#endif

}  // namespace

PackedWeightScope::PackedWeightScope() { ++cache.depth; }

PackedWeightScope::~PackedWeightScope() {
  if (--cache.depth == 0) cache.entries.clear();
}

bool is_parameter_view(const Variable& v) {
  if (!v.defined()) return false;
  const VariableImpl& impl = *v.impl();
  return impl.shows_parameter || impl.is_parameter || (impl.grad_fn == nullptr && impl.requires_grad);
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
    const bool reusable = cacheable && cache.depth > 0 && m > 0 && n > 0 && k > 0;
    const GemmPrecision precision = gemm_precision();
    if (reusable && !w.is_cuda() && precision == GemmPrecision::fp32 && cpu::packed_gemm_enabled()) {
      if (const float* packed = find_or_pack(w, trans_w, m, k, n)) {
        cpu::GemmProfileScope timing("luong packed weight", false, trans_w, m, n, k);
        return cpu::gemm_packed(m, n, k, a, packed, beta, c);
      }
    }
    if (reusable && !w.is_cuda() && cpu::bf16_gemms_native()) {
      if (const uint16_t* packed = find_or_pack_bf16(w, trans_w, k, n)) {
        cpu::GemmProfileScope timing(cpu::bf16_route_name(true), false, trans_w, m, n, k);
        return cpu::bf16_gemm_packed(m, n, k, a, packed, beta, c);
      }
    }
#ifdef LUONG_WITH_CUDA
    if (reusable && w.is_cuda() && precision == GemmPrecision::bf16 && bf16_copies_enabled.load()) {
      if (const uint16_t* w16 = find_or_convert(w)) return cuda::gemm_bf16_weight(trans_w, m, n, k, a, w16, beta, c);
    }
#endif
  }
  LUONG_KERNEL(w.device(), gemm<T>, false, trans_w, m, n, k, T(1), a, w.data<T>(), beta, c);
}

bool set_bf16_weight_copies_enabled(bool on) { return bf16_copies_enabled.exchange(on); }

int64_t packed_weight_cache_entries() { return static_cast<int64_t>(cache.entries.size()); }

template void weight_gemm<float>(bool, int64_t, int64_t, int64_t, const float*, const Tensor&, float, float*, bool);
template void weight_gemm<double>(bool, int64_t, int64_t, int64_t, const double*, const Tensor&, double, double*, bool);

}  // namespace luong
