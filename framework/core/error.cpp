#include "framework/core/error.h"

#include <cstring>

namespace luong::detail {

void fail_check(const char* file, int line, const char* cond, const std::string& msg) {
  // Keep only the path from the project root so messages are stable across machines.
  const char* rel = std::strstr(file, "framework/");
  if (!rel) rel = std::strstr(file, "models/");
  if (!rel) rel = file;
  throw Error(str(msg, " [check '", cond, "' failed at ", rel, ":", line, "]"));
}

}  // namespace luong::detail
