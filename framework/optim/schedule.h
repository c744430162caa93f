// Learning-rate schedules: the trainer asks lr(step, epoch) before every optimizer step and reports epoch
// ends and validation perplexities. Steps and epochs count from 1 (the step about to be taken, the epoch in
// progress). state()/load_state() carry whatever a schedule accumulates, so a resumed run gets the same lrs.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "framework/core/registry.h"
#include "framework/io/state_dict.h"

namespace luong {

// Settings for every schedule; each reads and validates the ones it uses.
struct ScheduleOptions {
  double base_lr = 1.0;          // all: the initial (constant, luong, plateau) or peak (warmup) lr
  int64_t decay_start = 5;       // luong: the last epoch at base_lr (K); decay from epoch K + 1 on
  double decay_factor = 0.5;     // luong, plateau: multiplier applied per decay
  int64_t warmup_steps = 4000;   // warmup: steps of linear increase to base_lr
  int64_t plateau_patience = 1;  // plateau: validations without improvement before a decay
  double min_lr = 0.0;           // plateau: decays never go below this
};

class Schedule {
 public:
  Schedule(std::string name, ScheduleOptions options) : name_(std::move(name)), options_(options) {}
  virtual ~Schedule() = default;

  // The lr for the given step (from 1) during the given epoch (from 1).
  virtual double lr(int64_t step, int64_t epoch) const = 0;
  // Called after epoch `epoch` finished, and after each validation with its perplexity.
  virtual void on_epoch_end(int64_t epoch) {}
  virtual void on_validation(double valid_ppl) {}

  // Writes "name" plus the schedule's own counters; load_state checks the name and restores them.
  void state(StateDict& out) const;
  void load_state(const StateDict& in);

  const std::string& name() const { return name_; }
  const ScheduleOptions& options() const { return options_; }

 protected:
  virtual void save(StateDict& out) const {}  // stateless schedules (a pure function of step/epoch) keep none
  virtual void load(const StateDict& in) {}

 private:
  std::string name_;
  ScheduleOptions options_;
};

using ScheduleFactory = std::function<std::unique_ptr<Schedule>(const ScheduleOptions&)>;
using ScheduleRegistry = Registry<ScheduleFactory>;

// The schedule registered under `name`; the error for an unknown name lists the registered ones.
std::unique_ptr<Schedule> make_schedule(const std::string& name, const ScheduleOptions& options = {});

}  // namespace luong

// LUONG_REGISTER_SCHEDULE("luong", factory, "help text"): one line in the schedule's own file.
#define LUONG_REGISTER_SCHEDULE(name, factory, help)                                     \
  static const bool LUONG_CONCAT(kLuongScheduleRegistered_, __COUNTER__) = \
      ::luong::ScheduleRegistry::instance().add(name, factory, help)
