#include "framework/io/checkpoint_average.h"

#include <cmath>
#include <map>

#include "framework/io/checkpoint.h"

namespace luong {
namespace {

bool is_model_float(const std::string& name, const Tensor& t) {
  const bool floating = t.dtype() == DType::f32 || t.dtype() == DType::f64 || t.dtype() == DType::bf16;
  return floating && name.compare(0, 6, "model/") == 0;
}

// Fails naming `where` and the parameter when a float64 tensor holds a NaN or an infinity: one such value
// poisons the whole average, and an average of diverged weights must not look like a usable model.
void require_finite(const Tensor& f64, const std::string& name, const std::string& where) {
  const double* p = f64.data<double>();
  for (int64_t i = 0; i < f64.numel(); ++i)
    if (!std::isfinite(p[i]))
      LUONG_FAIL("average_checkpoints: parameter '", name, "' ", where, " has a non-finite value (", p[i],
                 " at element ", i, "); checkpoints of a diverged run cannot be averaged");
}

// Attributes save_checkpoint writes itself (and refuses from its caller).
bool is_writer_attribute(const std::string& key) {
  return key == "luong_version" || key == "format_version" || key == "created" || key == "checksum" ||
         key == "checksum_algorithm";
}

template <class Map>
void drop_training_state(Map& entries) {
  for (auto it = entries.begin(); it != entries.end();)
    it = is_training_state_entry(it->first) ? entries.erase(it) : std::next(it);
}

}  // namespace

bool is_training_state_entry(const std::string& name) {
  // ema/: an averaged run's training parameters (model/ holds its average, which is what gets averaged).
  for (const char* prefix : {"optim/", "schedule/", "trainer/", "data/", "ema/"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

Checkpoint average_checkpoints(const std::vector<std::string>& paths, const AverageCompatibility& compatible) {
  LUONG_CHECK(!paths.empty(), "average_checkpoints: no checkpoints given");
  std::map<std::string, Tensor> sums;  // float64 running sums of the model tensors
  std::string first;                   // the file that defined the parameter set
  Checkpoint reference;                // the first file without its tensors, for `compatible`
  Checkpoint out;                      // the first file's other entries and metadata
  for (const auto& path : paths) {
    Checkpoint c = load_checkpoint(path);
    if (first.empty()) {
      first = path;
      reference.path = c.path;
      reference.metadata = c.metadata;
      reference.format_version = c.format_version;
      reference.state.strings = c.state.strings;
      for (const auto& [name, t] : c.state.tensors)
        if (is_model_float(name, t)) {
          sums[name] = t.to(DType::f64).clone();
          require_finite(sums[name], name, "in " + path);
        }
      out.state = std::move(c.state);
      for (const auto& [key, value] : c.metadata)
        if (!is_writer_attribute(key)) out.metadata[key] = value;
      out.format_version = c.format_version;
      continue;
    }
    if (compatible) compatible(reference, c);
    for (auto& [name, sum] : sums) {
      auto it = c.state.tensors.find(name);
      if (it == c.state.tensors.end())
        LUONG_FAIL("average_checkpoints: parameter '", name, "' is in ", first, " but missing from ", path);
      if (it->second.shape() != sum.shape())
        LUONG_FAIL("average_checkpoints: parameter '", name, "' has shape ", shape_str(sum.shape()), " in ", first,
                   " but ", shape_str(it->second.shape()), " in ", path);
      const Tensor add = it->second.to(DType::f64);
      require_finite(add, name, "in " + path);
      double* s = sum.data<double>();
      const double* a = add.data<double>();
      for (int64_t i = 0; i < sum.numel(); ++i) s[i] += a[i];
    }
    for (const auto& [name, t] : c.state.tensors)
      if (is_model_float(name, t) && !sums.count(name))
        LUONG_FAIL("average_checkpoints: parameter '", name, "' is in ", path, " but missing from ", first);
  }
  const double n = static_cast<double>(paths.size());
  for (auto& [name, sum] : sums) {
    double* s = sum.data<double>();
    for (int64_t i = 0; i < sum.numel(); ++i) s[i] /= n;
    const DType dtype = out.state.tensors.at(name).dtype();
    Tensor result = sum.to(dtype);
    // The float64 sum of finite float64 values can overflow, and so can a narrowing to float32 / bf16.
    require_finite(dtype == DType::f64 ? result : result.to(DType::f64), name, "of the average");
    out.state.tensors[name] = std::move(result);
  }
  drop_training_state(out.state.tensors);
  drop_training_state(out.state.ints);
  drop_training_state(out.state.floats);
  drop_training_state(out.state.strings);
  return out;
}

}  // namespace luong
