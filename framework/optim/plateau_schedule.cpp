// Decay on plateau: multiply the lr by decay_factor (not below min_lr) once validation perplexity has not
// improved on the best seen for plateau_patience validations in a row; an improvement resets the count.
// The lr, the best perplexity and the count are state, saved so a resumed run decays at the same point.
#include <algorithm>
#include <cmath>
#include <limits>

#include "framework/optim/schedule.h"
#include "framework/optim/state_access.h"

namespace luong {
namespace {

class PlateauSchedule : public Schedule {
 public:
  explicit PlateauSchedule(const ScheduleOptions& o) : Schedule("plateau", o), lr_(o.base_lr) {
    LUONG_CHECK(std::isfinite(o.base_lr) && o.base_lr > 0, "plateau: base_lr must be > 0, got ", o.base_lr);
    LUONG_CHECK(o.decay_factor > 0 && o.decay_factor < 1, "plateau: decay_factor must be in (0, 1), got ",
                o.decay_factor);
    LUONG_CHECK(o.plateau_patience >= 1, "plateau: plateau_patience must be >= 1, got ", o.plateau_patience);
    LUONG_CHECK(o.min_lr >= 0, "plateau: min_lr must be >= 0, got ", o.min_lr);
  }

  double lr(int64_t, int64_t) const override { return lr_; }

  void on_validation(double valid_ppl) override {
    // A NaN perplexity is never an improvement (and never becomes the best).
    if (valid_ppl < best_) {
      best_ = valid_ppl;
      bad_count_ = 0;
      return;
    }
    if (++bad_count_ >= options().plateau_patience) {
      lr_ = std::max(options().min_lr, lr_ * options().decay_factor);
      bad_count_ = 0;
    }
  }

 protected:
  void save(StateDict& out) const override {
    out.floats["lr"] = lr_;
    out.floats["best_ppl"] = best_;
    out.ints["bad_count"] = bad_count_;
  }
  void load(const StateDict& in) override {
    const std::string who = "schedule 'plateau'";
    lr_ = optim_detail::require(in.floats, in, "lr", who);
    best_ = optim_detail::require(in.floats, in, "best_ppl", who);
    bad_count_ = optim_detail::require(in.ints, in, "bad_count", who);
  }

 private:
  double lr_;
  double best_ = std::numeric_limits<double>::infinity();
  int64_t bad_count_ = 0;
};

LUONG_REGISTER_SCHEDULE(
    "plateau", [](const ScheduleOptions& o) { return std::unique_ptr<Schedule>(new PlateauSchedule(o)); },
    "times decay_factor after plateau_patience validations without a better perplexity");

}  // namespace
}  // namespace luong
