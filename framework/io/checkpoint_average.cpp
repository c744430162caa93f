#include "framework/io/checkpoint_average.h"

#include <map>

#include "framework/io/checkpoint.h"

namespace luong {
namespace {

bool is_model_float(const std::string& name, const Tensor& t) {
  const bool floating = t.dtype() == DType::f32 || t.dtype() == DType::f64 || t.dtype() == DType::bf16;
  return floating && name.compare(0, 6, "model/") == 0;
}

}  // namespace

StateDict average_checkpoints(const std::vector<std::string>& paths, const AverageCompatibility& compatible) {
  LUONG_CHECK(!paths.empty(), "average_checkpoints: no checkpoints given");
  std::map<std::string, Tensor> sums;  // float64 running sums of the model tensors
  std::string first;                   // the file that defined the parameter set
  Checkpoint reference;                // the first file without its tensors, for `compatible`
  StateDict last;
  for (const auto& path : paths) {
    Checkpoint c = load_checkpoint(path);
    if (first.empty()) {
      first = path;
      reference.path = c.path;
      reference.metadata = c.metadata;
      reference.format_version = c.format_version;
      reference.state.strings = c.state.strings;
      for (const auto& [name, t] : c.state.tensors)
        if (is_model_float(name, t)) sums[name] = t.to(DType::f64).clone();
    } else {
      if (compatible) compatible(reference, c);
      for (auto& [name, sum] : sums) {
        auto it = c.state.tensors.find(name);
        if (it == c.state.tensors.end())
          LUONG_FAIL("average_checkpoints: parameter '", name, "' is in ", first, " but missing from ", path);
        if (it->second.shape() != sum.shape())
          LUONG_FAIL("average_checkpoints: parameter '", name, "' has shape ", shape_str(sum.shape()), " in ", first,
                     " but ", shape_str(it->second.shape()), " in ", path);
        const Tensor add = it->second.to(DType::f64);
        double* s = sum.data<double>();
        const double* a = add.data<double>();
        for (int64_t i = 0; i < sum.numel(); ++i) s[i] += a[i];
      }
      for (const auto& [name, t] : c.state.tensors)
        if (is_model_float(name, t) && !sums.count(name))
          LUONG_FAIL("average_checkpoints: parameter '", name, "' is in ", path, " but missing from ", first);
    }
    last = std::move(c.state);
  }
  const double n = static_cast<double>(paths.size());
  for (auto& [name, sum] : sums) {
    double* s = sum.data<double>();
    for (int64_t i = 0; i < sum.numel(); ++i) s[i] /= n;
    last.tensors[name] = sum.to(last.tensors.at(name).dtype());
  }
  return last;
}

}  // namespace luong
