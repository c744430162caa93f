// A CUDA graph of everything a function enqueues on the current device's stream: recorded once, then
// launched as one unit. A decoder step of the paper's model enqueues thousands of small kernels and GEMMs,
// each costing the host microseconds to launch; replaying the recorded graph costs one launch (issue 9:
// the bf16 step was bound by the host, not the GPU).
//
// What a recorded function must respect (framework/core/capture_guard.h enforces the first):
// - it reads no device value on the host: a capture records work, it does not run it;
// - every replay uses the addresses the capture saw: its temporaries come from a private pool of the device's
//   caching allocator that nothing else draws from while the graph lives, its inputs and outputs are tensors
//   the caller keeps and refills / reads between replays;
// - host data it uploads (masks, index tables, constants) is copied at capture time into pinned memory the
//   graph owns, and every replay uploads those same bytes: such data must be the same on every replay.
#pragma once
#include <functional>
#include <memory>

namespace luong::cuda {

class Graph {
 public:
  explicit Graph(int device);
  ~Graph();  // waits for the device, then returns the private pool's blocks to the shared cache
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Records fn's work on the device's stream without running it (luong::Error naming the failing call if
  // fn does something a capture cannot hold; the graph is then left empty and may be captured again).
  void capture(const std::function<void()>& fn);
  // Enqueues one run of the recorded work on the device's stream.
  void replay();
  bool captured() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// While the calling thread captures: a pinned copy of `bytes` at src owned by the graph being captured, for
// a host-to-device copy in the graph to read at each replay; nullptr when the thread is not capturing.
const void* capture_host_copy(const void* src, size_t bytes);

}  // namespace luong::cuda
