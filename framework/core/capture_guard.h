// Capture safety: while a training step is recorded into a CUDA graph, the host must not read a value the
// device computes. Such a read waits for the queued work to run, and a stream that is being captured runs
// nothing: it only records. The same guard runs on the CPU, where a step can be checked for capture safety
// on a machine without a GPU (tests/autograd/capture_guard_test.cpp runs the model's whole step under it).
//
// Every place that hands a device value to the host calls check_no_host_read with what it reads; inside a
// CaptureScope that is an error naming the read, outside it costs one thread-local load.
#pragma once

namespace luong {

// Marks the calling thread as capturing for its lifetime (nests). A CUDA graph capture opens one; a test
// opens one around a CPU step to prove the step would capture.
class CaptureScope {
 public:
  CaptureScope();
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
};

bool capturing();

// Throws luong::Error("<what> reads a device value on the host ...") inside a CaptureScope.
void check_no_host_read(const char* what);

}  // namespace luong
