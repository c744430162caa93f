#include "framework/core/error.h"

#include <cstdlib>
#include <cstring>

namespace luong::detail {
namespace {

// True when the environment sets LUONG_DEBUG (non-empty).
bool debug_errors() {
  const char* v = std::getenv("LUONG_DEBUG");
  return v != nullptr && *v != '\0';
}

}  // namespace

void fail_check(const char* file, int line, const char* cond, const std::string& msg) {
  // Users get the message alone: the condition and source place mean nothing to them and read like a
  // crash. LUONG_DEBUG=1 adds them back for whoever debugs luong itself.
  if (!debug_errors()) throw Error(msg);
  // Keep only the path from the project root so messages are stable across machines.
  const char* rel = std::strstr(file, "framework/");
  if (!rel) rel = std::strstr(file, "models/");
  if (!rel) rel = file;
  throw Error(str(msg, " [check '", cond, "' failed at ", rel, ":", line, "]"));
}

}  // namespace luong::detail
