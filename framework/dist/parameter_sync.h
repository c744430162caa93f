// Keeping the replicas identical: rank 0's initial parameters go to every rank, and a cheap checksum
// comparison catches replicas that drifted apart (a rank that skipped a step, non-deterministic updates).
#pragma once
#include "framework/autograd/flat_parameters.h"
#include "framework/dist/process_group.h"

namespace luong {

// Blocking: overwrites every rank's flat parameter buffer with the root's.
void broadcast_parameters(FlatParameters& params, ProcessGroup& group, int root = 0);

// FNV-1a over the bytes of the flat parameter buffer.
uint64_t parameter_checksum(const FlatParameters& params);

// Collective: throws luong::Error on every rank, naming the ranks whose parameters differ from rank 0's.
void check_parameters_identical(const FlatParameters& params, ProcessGroup& group);

}  // namespace luong
