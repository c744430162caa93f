// luong_dist_fault_helper MODE TIMEOUT_MS: a tiny MPI job whose last rank fails on purpose, run by
// fault_test.cpp under mpirun to prove that no failure leaves the job hanging.
//   ok     every rank finishes normally (checks the harness itself)
//   throw  the last rank throws a luong::Error nobody catches -> terminate handler -> MPI_Abort
//   exit   the last rank exits with status 3 without finalising MPI -> mpirun ends the job
//   hang   the last rank stops taking part (sleeps) -> rank 0's watchdog fires after TIMEOUT_MS
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "framework/dist/process_group.h"

int main(int argc, char** argv) {
  using namespace luong;
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s ok|throw|exit|hang TIMEOUT_MS\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  auto pg = make_process_group("auto", Device::cpu());
  pg->set_timeout(std::chrono::milliseconds(std::atoi(argv[2])));
  Tensor t = Tensor::full({1000}, 1.0, DType::f32);
  pg->all_reduce_sum(t).wait();  // every rank is up and talking

  if (pg->size() > 1 && pg->rank() == pg->size() - 1) {
    if (mode == "throw") throw Error("injected failure on purpose");
    if (mode == "exit") std::_Exit(3);
    if (mode == "hang") std::this_thread::sleep_for(std::chrono::minutes(10));
  }
  for (int i = 0; i < 3; ++i) pg->all_reduce_sum(t).wait();
  const double want = std::pow(static_cast<double>(pg->size()), 4);
  if (t.to_vector()[999] != want) {
    std::fprintf(stderr, "fault helper: rank %d got %g, want %g\n", pg->rank(), t.to_vector()[999], want);
    return 1;
  }
  std::printf("fault helper: rank %d done\n", pg->rank());
  return 0;
}
