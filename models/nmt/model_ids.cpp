#include "models/nmt/model_ids.h"

#include "framework/kernels/dispatch.h"

namespace luong::nmt {

void check_id_batch(const char* what, const Tensor& ids, const std::vector<int64_t>& lengths) {
  LUONG_CHECK(ids.defined() && ids.dtype() == DType::i64 && ids.dim() == 2, what, ": ids must be int64 (B, T), got ",
              ids.defined() ? ids.describe() : std::string("undefined"));
  if (lengths.empty()) return;
  LUONG_CHECK(static_cast<int64_t>(lengths.size()) == ids.size(0), what, ": ", lengths.size(),
              " lengths for a batch of ", ids.size(0));
  for (int64_t len : lengths)
    LUONG_CHECK(len >= 1 && len <= ids.size(1), what, ": length ", len, " outside [1, ", ids.size(1), "]");
}

Tensor time_major_ids(const Tensor& ids, Device device, const std::vector<int64_t>& lengths, bool reverse_within) {
  const int64_t B = ids.size(0), T = ids.size(1);
  // The permutation depends on the shape and lengths alone, so it is built on the host and the ids never
  // are: on a GPU they stay on the device (no read back; a captured step uploads the same table each replay).
  std::vector<int64_t> from(static_cast<size_t>(B * T));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = reverse_within ? lengths[static_cast<size_t>(b)] : T;
    for (int64_t t = 0; t < T; ++t) {
      const int64_t src_t = t < len && reverse_within ? len - 1 - t : t;
      from[static_cast<size_t>(t * B + b)] = b * T + src_t;
    }
  }
  const Tensor index = Tensor::from_ids(from, {T, B}, ids.device());
  Tensor out = Tensor::empty({T, B}, DType::i64, ids.device());
  LUONG_KERNEL(ids.device(), gather<int64_t>, B * T, index.data<int64_t>(), ids.data<int64_t>(), out.data<int64_t>());
  return out.to(device);
}

Tensor length_mask(const std::vector<int64_t>& lengths, int64_t max_len, Device device) {
  const int64_t B = static_cast<int64_t>(lengths.size());
  std::vector<double> m(static_cast<size_t>(B * max_len), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < lengths[static_cast<size_t>(b)]; ++s) m[static_cast<size_t>(b * max_len + s)] = 1.0;
  return Tensor::from(m, {B, max_len}, DType::u8, device);
}

}  // namespace luong::nmt
