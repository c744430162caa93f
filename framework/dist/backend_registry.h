// Communication backends register themselves by name, one line in their own file:
//   LUONG_REGISTER_PROCESS_GROUP("mpi", [](Device d) { return std::make_unique<MpiProcessGroup>(d); });
// so a new backend never means editing the factory.
#pragma once
#include <functional>
#include <memory>

#include "framework/core/registry.h"
#include "framework/dist/process_group.h"

namespace luong {

using ProcessGroupFactory = std::function<std::unique_ptr<ProcessGroup>(Device)>;
using ProcessGroupRegistry = Registry<ProcessGroupFactory>;

}  // namespace luong

#define LUONG_REGISTER_PROCESS_GROUP(name, ...)                                                         \
  static const bool LUONG_CONCAT(kLuongProcessGroupRegistered_, __COUNTER__) =                           \
      ::luong::ProcessGroupRegistry::instance().add(name, ::luong::ProcessGroupFactory(__VA_ARGS__))
