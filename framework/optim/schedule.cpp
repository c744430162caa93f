#include "framework/optim/schedule.h"

#include "framework/optim/state_access.h"

namespace luong {

void Schedule::state(StateDict& out) const {
  out.strings["name"] = name_;
  save(out);
}

void Schedule::load_state(const StateDict& in) {
  optim_detail::check_name(in, "schedule", name_);
  load(in);
}

std::unique_ptr<Schedule> make_schedule(const std::string& name, const ScheduleOptions& options) {
  const auto& reg = ScheduleRegistry::instance();
  if (!reg.contains(name))
    LUONG_FAIL("unknown schedule '", name, "' (registered: ", optim_detail::join(reg.names()), ")");
  return reg.get(name)(options);
}

}  // namespace luong
