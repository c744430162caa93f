// Adam (Kingma & Ba 2015, Algorithm 1) with bias-corrected moments, and weight decay either decoupled
// (AdamW, Loshchilov & Hutter 2019; the default) or added to the gradient (`decoupled: false`).
#include <cmath>

#include "framework/kernels/dispatch.h"
#include "framework/optim/optimizer.h"

namespace luong {
namespace {

class Adam : public Optimizer {
 public:
  explicit Adam(const OptimizerOptions& o) : Optimizer("adam", o) {
    LUONG_CHECK(o.beta1 >= 0 && o.beta1 < 1, "adam: beta1 must be in [0, 1), got ", o.beta1);
    LUONG_CHECK(o.beta2 >= 0 && o.beta2 < 1, "adam: beta2 must be in [0, 1), got ", o.beta2);
    LUONG_CHECK(std::isfinite(o.eps) && o.eps > 0, "adam: eps must be > 0, got ", o.eps);
    LUONG_CHECK(std::isfinite(o.weight_decay) && o.weight_decay >= 0, "adam: weight_decay must be >= 0, got ",
                o.weight_decay);
  }

 protected:
  std::vector<std::string> buffer_names() const override { return {"m", "v"}; }

  void update(Tensor& param, const Tensor& grad, double grad_scale, std::vector<Tensor>& buffers, double lr,
              int64_t t) override {
    const OptimizerOptions& o = options();
    // Computed in double so float32 runs get the correctly rounded correction even after many steps.
    const double bc1 = 1.0 - std::pow(o.beta1, static_cast<double>(t));
    const double bc2 = 1.0 - std::pow(o.beta2, static_cast<double>(t));
    dispatch_float(param.dtype(), "adam", [&](auto tag) {
      using T = decltype(tag);
      LUONG_KERNEL(param.device(), adam_update<T>, param.numel(), param.data<T>(), grad.data<T>(),
                   static_cast<T>(grad_scale), buffers[0].data<T>(), buffers[1].data<T>(), static_cast<T>(lr),
                   static_cast<T>(o.beta1), static_cast<T>(o.beta2), static_cast<T>(o.eps),
                   static_cast<T>(o.weight_decay), o.decoupled, static_cast<T>(bc1), static_cast<T>(bc2));
    });
  }
};

LUONG_REGISTER_OPTIMIZER(
    "adam", [](const OptimizerOptions& o) { return std::unique_ptr<Optimizer>(new Adam(o)); },
    "Adam with bias correction (options: beta1, beta2, eps, weight_decay, decoupled)");

}  // namespace
}  // namespace luong
