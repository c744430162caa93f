// Loading helpers on top of load_checkpoint: shape-checked copies into live tensors, string lists.
#include "framework/io/checkpoint.h"
#include "framework/ops/tensor_math.h"

namespace luong {

void load_tensors_into(const Checkpoint& checkpoint, const StateDict& destinations, const std::string& owned_prefix) {
  // Check everything first so a mismatch leaves the destinations untouched.
  if (!owned_prefix.empty()) {
    for (const auto& [name, t] : checkpoint.state.tensors) {
      if (name.rfind(owned_prefix, 0) == 0 && !destinations.tensors.contains(name))
        LUONG_FAIL("checkpoint ", checkpoint.path, ": parameter '", name, "' ", shape_str(t.shape()),
                   " is not in this model (the checkpoint's model is another shape: more layers, another attention ",
                   "or other options)");
    }
  }
  for (const auto& [name, dst] : destinations.tensors) {
    auto it = checkpoint.state.tensors.find(name);
    if (it == checkpoint.state.tensors.end())
      LUONG_FAIL("checkpoint ", checkpoint.path, ": parameter '", name, "' is missing");
    if (it->second.shape() != dst.shape())
      LUONG_FAIL("checkpoint ", checkpoint.path, ": parameter '", name, "' has shape ", shape_str(it->second.shape()),
                 " in the checkpoint but ", shape_str(dst.shape()), " in the model");
    // luong writes parameters as floating point and never with a NaN or an infinity: anything else is a file
    // changed outside luong, and copying it in would round integers silently or decode from NaN.
    const bool float_dst = dst.dtype() == DType::f32 || dst.dtype() == DType::f64 || dst.dtype() == DType::bf16;
    const DType src = it->second.dtype();
    if (float_dst && src != DType::f32 && src != DType::f64 && src != DType::bf16)
      LUONG_FAIL("checkpoint ", checkpoint.path, ": parameter '", name, "' is stored as ", src,
                 "; expected floating point");
    // Checked in the destination's dtype: a float64 1e300 is finite there but infinite in float32, and a
    // float32 file entry marked bfloat16 is converted first.
    if (float_dst && has_non_finite(it->second.to(dst.dtype() == DType::bf16 ? DType::f32 : dst.dtype())))
      LUONG_FAIL("checkpoint ", checkpoint.path, ": parameter '", name,
                 "' holds NaN or infinite values (luong never writes such a checkpoint: a damaged or edited file)");
  }
  for (const auto& [name, dst] : destinations.tensors) {
    Tensor target = dst;  // a handle on the same storage
    target.copy_(checkpoint.state.tensors.at(name));
  }
}

std::string join_string_list(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].find('\n') != std::string::npos)
      LUONG_FAIL("string list item ", i, " ('", items[i], "') contains a newline and cannot be stored");
    out += items[i];
    out += '\n';
  }
  return out;
}

std::vector<std::string> split_string_list(const std::string& joined) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < joined.size()) {
    const size_t end = joined.find('\n', start);
    LUONG_CHECK(end != std::string::npos, "string list does not end with a newline");
    out.push_back(joined.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void check_string_list(const Checkpoint& checkpoint, const std::string& name,
                       const std::vector<std::string>& expected) {
  auto it = checkpoint.state.strings.find(name);
  if (it == checkpoint.state.strings.end())
    LUONG_FAIL("checkpoint ", checkpoint.path, ": string list '", name, "' is missing");
  const std::vector<std::string> stored = split_string_list(it->second);
  const size_t n = std::min(stored.size(), expected.size());
  for (size_t i = 0; i < n; ++i)
    if (stored[i] != expected[i])
      LUONG_FAIL("checkpoint ", checkpoint.path, ": '", name, "' differs at item ", i, ": checkpoint has '", stored[i],
                 "', expected '", expected[i], "'");
  if (stored.size() != expected.size())
    LUONG_FAIL("checkpoint ", checkpoint.path, ": '", name, "' has ", stored.size(), " items, expected ",
               expected.size());
}

}  // namespace luong
