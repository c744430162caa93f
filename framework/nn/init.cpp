// The built-in initialisers. All draw from the generator in element order, one value each.
#include "framework/nn/init.h"

#include <cmath>
#include <vector>

namespace luong {
namespace {

void fill_with(Tensor& t, const char* init, const std::function<double()>& draw) {
  LUONG_CHECK(t.device().is_cpu(), "initialiser '", init, "': parameters are initialised on the CPU, got ",
              t.describe());
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (auto& x : v) x = draw();
  t.copy_(Tensor::from(v, t.shape(), t.dtype()));
}

// Luong et al. 2015, §4.1: "parameters are uniformly initialized in [-0.1, 0.1]".
void uniform(Tensor& t, double range, Generator& gen) {
  LUONG_CHECK(range >= 0, "initialiser 'uniform': range must be >= 0, got ", range);
  fill_with(t, "uniform", [&] { return -range + 2.0 * range * gen.uniform(); });
}

// Glorot & Bengio 2010: uniform in [-a, a], a = range * sqrt(6 / (fan_in + fan_out)). Our weights are
// stored (in, out); a 1-d tensor (a bias) counts as (1, n).
void xavier_uniform(Tensor& t, double range, Generator& gen) {
  const double fan_in = t.dim() >= 2 ? static_cast<double>(t.numel() / t.size(-1)) : 1.0;
  const double fan_out = static_cast<double>(t.dim() >= 1 ? t.size(-1) : 1);
  const double a = range * std::sqrt(6.0 / (fan_in + fan_out));
  fill_with(t, "xavier_uniform", [&] { return -a + 2.0 * a * gen.uniform(); });
}

void normal(Tensor& t, double range, Generator& gen) {
  fill_with(t, "normal", [&] { return range * gen.normal(); });
}

}  // namespace

LUONG_REGISTER_INIT("uniform", uniform, "uniform in [-range, range] (Luong et al. 2015: range 0.1)");
LUONG_REGISTER_INIT("xavier_uniform", xavier_uniform, "Glorot uniform, scaled by range (1.0 = standard)");
LUONG_REGISTER_INIT("normal", normal, "normal with mean 0 and standard deviation range");

}  // namespace luong
