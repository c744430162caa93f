#include "framework/dist/process_group.h"

#include <cstdlib>

#include "framework/dist/backend_registry.h"
#include "framework/dist/bootstrap.h"

namespace luong {

bool Work::test() {
  if (!done_ && impl_) done_ = impl_->test();
  return completed();
}

void Work::wait() {
  if (completed()) return;
  impl_->wait();
  done_ = true;
}

std::chrono::milliseconds default_collective_timeout() {
  if (const char* v = std::getenv("LUONG_DIST_TIMEOUT_S"); v && *v) {
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    LUONG_CHECK(end && *end == '\0' && s > 0, "LUONG_DIST_TIMEOUT_S='", v, "' is not a positive number of seconds");
    // The cap of dist.timeout_s in the NMT config: larger values overflow the millisecond (and the
    // deadline's nanosecond) count, and the watchdog would fire at once with a negative timeout.
    constexpr double kMaxSeconds = 604800;  // one week
    LUONG_CHECK(s <= kMaxSeconds, "LUONG_DIST_TIMEOUT_S='", v, "' is out of range: expected seconds in (0, ",
                kMaxSeconds, "] (one week at most)");
    return std::chrono::milliseconds(static_cast<int64_t>(s * 1000.0));
  }
  return std::chrono::seconds(60);
}

ProcessGroup::ProcessGroup() : timeout_(default_collective_timeout()) {}

std::unique_ptr<ProcessGroup> make_process_group(const std::string& backend, Device device) {
  std::string name = backend;
  if (name == "auto") {
    if (!launched_by_mpi()) name = "local";
    else if (device.is_cuda() && ProcessGroupRegistry::instance().contains("nccl")) name = "nccl";
    else name = "mpi";
  }
  if (name == "nccl" && !ProcessGroupRegistry::instance().contains("nccl"))
    LUONG_FAIL("process group backend 'nccl' is not compiled into this build (needs the CUDA build with NCCL "
               "found); use 'mpi' or 'auto'");
  if ((name == "mpi" || name == "nccl") && !launched_by_mpi())
    LUONG_FAIL("process group backend '", name, "' needs a job started by mpirun or srun (none of "
               "OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK is set); use 'auto' or 'local' for one process");
  if (!ProcessGroupRegistry::instance().contains(name)) {
    std::string known;
    for (const auto& k : ProcessGroupRegistry::instance().names()) known += (known.empty() ? "" : ", ") + k;
    LUONG_FAIL("unknown process group backend '", backend, "' (expected auto or one of: ", known, ")");
  }
  return ProcessGroupRegistry::instance().get(name)(device);
}

}  // namespace luong
