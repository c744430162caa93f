// SGD, optionally with heavy-ball momentum (m = momentum * m + g; param -= lr * m) and L2 weight decay added
// to the gradient. Luong et al. 2015 train with plain SGD (lr 1.0) and a halving schedule.
#include <cmath>

#include "framework/kernels/dispatch.h"
#include "framework/optim/optimizer.h"

namespace luong {
namespace {

class Sgd : public Optimizer {
 public:
  explicit Sgd(const OptimizerOptions& o) : Optimizer("sgd", o) {
    LUONG_CHECK(std::isfinite(o.momentum) && o.momentum >= 0 && o.momentum < 1,
                "sgd: momentum must be in [0, 1), got ", o.momentum);
    LUONG_CHECK(std::isfinite(o.weight_decay) && o.weight_decay >= 0, "sgd: weight_decay must be >= 0, got ",
                o.weight_decay);
  }

 protected:
  std::vector<std::string> buffer_names() const override {
    if (options().momentum > 0) return {"momentum"};
    return {};
  }

  void update(Tensor& param, const Tensor& grad, double grad_scale, std::vector<Tensor>& buffers, double lr,
              int64_t) override {
    dispatch_float(param.dtype(), "sgd", [&](auto tag) {
      using T = decltype(tag);
      T* m = buffers.empty() ? nullptr : buffers[0].data<T>();
      LUONG_KERNEL(param.device(), sgd_update<T>, param.numel(), param.data<T>(), grad.data<T>(),
                   static_cast<T>(grad_scale), m, static_cast<T>(lr), static_cast<T>(options().momentum),
                   static_cast<T>(options().weight_decay));
    });
  }
};

LUONG_REGISTER_OPTIMIZER(
    "sgd", [](const OptimizerOptions& o) { return std::unique_ptr<Optimizer>(new Sgd(o)); },
    "SGD with optional momentum and L2 weight decay (options: momentum, weight_decay)");

}  // namespace
}  // namespace luong
