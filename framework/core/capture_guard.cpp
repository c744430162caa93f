#include "framework/core/capture_guard.h"

#include "framework/core/error.h"

namespace luong {
namespace {
// Per thread: a capture records one stream from the thread that opened it. Other threads (a data loader
// building the next batch on the host) keep reading their own host tensors, but must not touch the device
// while a capture is open: each device has one stream, so their copies would be recorded into the graph, and
// a synchronisation would invalidate the capture (cuda::Graph then fails by name).
thread_local int t_depth = 0;
}  // namespace

CaptureScope::CaptureScope() { ++t_depth; }
CaptureScope::~CaptureScope() { --t_depth; }

bool capturing() { return t_depth > 0; }

void check_no_host_read(const char* what) {
  LUONG_CHECK(t_depth == 0, what,
              " reads a device value on the host during a captured step; a CUDA graph records work without "
              "running it, so the value would not exist yet (keep the value on the device, or read it after "
              "the step)");
}

}  // namespace luong
