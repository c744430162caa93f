// The schedules that are pure functions of (step, epoch): constant, luong halving, and warmup with
// inverse-square-root decay. Being pure, they need no saved state to resume exactly.
#include <algorithm>
#include <cmath>

#include "framework/optim/schedule.h"

namespace luong {
namespace {

void check_base_lr(const char* who, const ScheduleOptions& o) {
  LUONG_CHECK(std::isfinite(o.base_lr) && o.base_lr > 0, who, ": base_lr must be > 0, got ", o.base_lr);
}

class ConstantSchedule : public Schedule {
 public:
  explicit ConstantSchedule(const ScheduleOptions& o) : Schedule("constant", o) { check_base_lr("constant", o); }
  double lr(int64_t, int64_t) const override { return options().base_lr; }
};

// Luong et al. 2015, section 4.1: lr 1.0 for the first K epochs, then halved every epoch (K = 5 of 10
// epochs, or 8 of 12 with dropout): lr(epoch) = base_lr * decay_factor^max(0, epoch - K).
class LuongSchedule : public Schedule {
 public:
  explicit LuongSchedule(const ScheduleOptions& o) : Schedule("luong", o) {
    check_base_lr("luong", o);
    LUONG_CHECK(o.decay_start >= 0, "luong: decay_start must be >= 0, got ", o.decay_start);
    LUONG_CHECK(o.decay_factor > 0 && o.decay_factor <= 1, "luong: decay_factor must be in (0, 1], got ",
                o.decay_factor);
  }
  double lr(int64_t, int64_t epoch) const override {
    const int64_t decays = std::max<int64_t>(0, epoch - options().decay_start);
    return options().base_lr * std::pow(options().decay_factor, static_cast<double>(decays));
  }
};

// Vaswani et al. 2017, eq. 3: lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5). Written with the
// peak lr (reached at step == warmup) as base_lr = d_model^-0.5 * warmup^-0.5, this is
//   lr(step) = base_lr * min(step / warmup, sqrt(warmup / step)),
// a linear rise for step <= warmup and inverse-square-root decay after it.
class WarmupSchedule : public Schedule {
 public:
  explicit WarmupSchedule(const ScheduleOptions& o) : Schedule("warmup", o) {
    check_base_lr("warmup", o);
    LUONG_CHECK(o.warmup_steps >= 1, "warmup: warmup_steps must be >= 1, got ", o.warmup_steps);
  }
  double lr(int64_t step, int64_t) const override {
    const double s = static_cast<double>(std::max<int64_t>(1, step));
    const double w = static_cast<double>(options().warmup_steps);
    return options().base_lr * std::min(s / w, std::sqrt(w / s));
  }
};

template <class S>
ScheduleFactory factory() {
  return [](const ScheduleOptions& o) { return std::unique_ptr<Schedule>(new S(o)); };
}

LUONG_REGISTER_SCHEDULE("constant", factory<ConstantSchedule>(), "base_lr at every step");
LUONG_REGISTER_SCHEDULE("luong", factory<LuongSchedule>(),
                        "base_lr until epoch decay_start, then times decay_factor every epoch (Luong et al. 2015)");
LUONG_REGISTER_SCHEDULE("warmup", factory<WarmupSchedule>(),
                        "linear warmup to base_lr over warmup_steps, then inverse-square-root decay (Vaswani et al. 2017)");

}  // namespace
}  // namespace luong
