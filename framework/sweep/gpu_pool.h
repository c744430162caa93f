// The GPUs a sweep spreads its trials over (spec `gpus:` or `luong sweep --gpus`): a trial takes as many free
// ones as it has processes and sees only those (CUDA_VISIBLE_DEVICES), so parallel trials on `device: cuda` do
// not all land on device 0. Like Ray Tune's or Optuna-on-a-node's one GPU per trial.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace luong::sweep {

class GpuPool {
 public:
  // `ids` as CUDA_VISIBLE_DEVICES takes them (indices or GPU-UUIDs), each once; empty = no pool (trials see
  // what the sweep sees).
  explicit GpuPool(std::vector<std::string> ids = {});

  bool enabled() const { return !ids_.empty(); }
  size_t size() const { return ids_.size(); }
  size_t free() const;
  // The first `n` free ids, now taken; nullopt (nothing taken) when fewer are free.
  std::optional<std::vector<std::string>> take(size_t n);
  // Gives taken ids back (ids not taken, or not in the pool, are ignored).
  void give_back(const std::vector<std::string>& ids);

 private:
  std::vector<std::string> ids_;
  std::vector<bool> taken_;
};

// "0,1" for CUDA_VISIBLE_DEVICES.
std::string visible_devices(const std::vector<std::string>& ids);

// Parses "0,1,3" (the --gpus option): ids separated by commas, spaces trimmed; throws luong::Error naming `what`
// for an empty id, a repeated one or characters CUDA_VISIBLE_DEVICES cannot hold (only [A-Za-z0-9-] are kept).
std::vector<std::string> parse_gpu_list(const std::string& text, const std::string& what);
// The same checks on a list already split (the spec's `gpus: [0, 1]`).
void check_gpu_ids(const std::vector<std::string>& ids, const std::string& what);

}  // namespace luong::sweep
