// Checkpoint files: one self-describing HDF5 file per StateDict, readable with h5py or h5dump alone.
// Layout (see docs/CHECKPOINT.md): every entry is a dataset at its '/'-separated path with a `kind`
// attribute (tensor/int/float/string); the root holds luong_version, format_version, created, the caller's
// metadata and an FNV-1a 64 checksum over every stored value. Saving is atomic (temp file, fsync, rename).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "framework/io/state_dict.h"

namespace luong {

inline constexpr int64_t kCheckpointFormatVersion = 1;

struct Checkpoint {
  std::string path;
  StateDict state;
  // String attributes at the file root: luong_version, created, and whatever the writer's caller passed
  // (world_size, dtype, ...). The checksum attributes are verified on load and not repeated here.
  std::map<std::string, std::string> metadata;
  int64_t format_version = 0;
};

// Called with each entry's name just before it is written (progress reporting; tests use it to fail midway).
using CheckpointEntryHook = std::function<void(const std::string& name)>;

// Writes `state` to `path` atomically: `<path>.tmp.<pid>` is written, flushed, fsynced and renamed over
// `path`, then the directory is fsynced; on any failure the temp file is removed and `path` is untouched.
// Parent directories are created. Tensors may live on any device; bf16 tensors are stored as float32.
void save_checkpoint(const std::string& path, const StateDict& state,
                     const std::map<std::string, std::string>& metadata = {},
                     const CheckpointEntryHook& on_entry = {});

// Reads and verifies a checkpoint (format version, checksum). Truncated, corrupted or foreign files raise
// luong::Error naming the file. Tensors come back on the CPU with the dtype they were saved with.
Checkpoint load_checkpoint(const std::string& path);

// Copies checkpoint tensors into existing ones: every name in `destinations.tensors` must exist in the
// checkpoint with the same shape (the error names the parameter and both shapes), and every checkpoint
// tensor under `owned_prefix` (e.g. "model/") must be one of the destinations: a checkpoint of a larger
// model (more layers, another attention) is refused rather than silently cut down, as PyTorch's strict
// load_state_dict does. Nothing is copied unless all match. dtypes may differ (values are converted);
// destinations may be on any device.
void load_tensors_into(const Checkpoint& checkpoint, const StateDict& destinations,
                       const std::string& owned_prefix = "");

// String lists (vocabularies) are stored as one string: every item followed by '\n', so [] is "" and
// [""] is "\n". Items must not contain '\n'.
std::string join_string_list(const std::vector<std::string>& items);
std::vector<std::string> split_string_list(const std::string& joined);
// Fails (naming the file, the entry, the first differing index and both items, or both sizes) unless the
// string list stored under `name` equals `expected`.
void check_string_list(const Checkpoint& checkpoint, const std::string& name, const std::vector<std::string>& expected);

}  // namespace luong
